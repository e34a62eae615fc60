package org.rhumbatron.platform.db;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Versioned schema migrations: files {@code V<n>__<name>.sql} per dialect, applied in ascending
 * order at open, each in its own transaction together with its {@code schema_version} row.
 *
 * <p>Re-opening applies nothing new. A migration that fails rolls back and names its file and
 * statement; an applied migration whose file was edited, or a database newer than the code, is
 * refused at open rather than half-understood. Add a change as a new file; never edit an applied
 * one.
 */
public final class Migrations {

  /** Classpath folder of the shipped migrations: {@code db/<dialect>/V<n>__<name>.sql}. */
  public static final String DEFAULT_LOCATION = "db";

  public static final String SCHEMA_VERSION_TABLE = "schema_version";

  private static final Logger log = LoggerFactory.getLogger(Migrations.class);

  private Migrations() {}

  /** Migrations in the classpath folder {@code <location>/<dialect>/}, in a directory or a jar. */
  public static MigrationSource classpath(String location) {
    return dialect -> loadClasspath(location + "/" + dialect.name());
  }

  /** Migrations in the directory {@code <root>/<dialect>/}. */
  public static MigrationSource directory(Path root) {
    return dialect -> loadDirectory(root.resolve(dialect.name()));
  }

  /** The highest applied version, or 0 for an empty database. */
  public static int currentVersion(Database db) {
    return db.read(
        tx ->
            tableExists(tx)
                ? (int)
                    tx.queryLong("SELECT COALESCE(MAX(version), 0) FROM " + SCHEMA_VERSION_TABLE)
                : 0);
  }

  /**
   * Applies the migrations that are not applied yet and returns how many ran. Validates the applied
   * ones first (same checksum, none missing, none newer than the newest known).
   */
  public static int apply(Database db, List<Migration> migrations) {
    List<Migration> sorted = sortedUnique(migrations);
    db.inTransaction(
        tx -> {
          tx.dialect().lockForMigration(tx.connection());
          tx.update(
              "CREATE TABLE IF NOT EXISTS "
                  + SCHEMA_VERSION_TABLE
                  + " (version INTEGER PRIMARY KEY, name TEXT NOT NULL, file TEXT NOT NULL,"
                  + " checksum TEXT NOT NULL, applied_at_ms BIGINT NOT NULL)");
          return null;
        });
    validate(sorted, applied(db));
    int ran = 0;
    for (Migration m : sorted) {
      if (applyOne(db, m)) {
        ran++;
      }
    }
    return ran;
  }

  private static boolean applyOne(Database db, Migration m) {
    return db.inTransaction(
        tx -> {
          tx.dialect().lockForMigration(tx.connection());
          // Checked inside the transaction: another process may have applied it meanwhile.
          if (tx.queryLong(
                  "SELECT COUNT(*) FROM " + SCHEMA_VERSION_TABLE + " WHERE version = ?",
                  m.version())
              > 0) {
            return false;
          }
          for (SqlScript.Statement s : SqlScript.split(m.sql())) {
            try (Statement st = tx.connection().createStatement()) {
              st.execute(s.sql());
            } catch (SQLException e) {
              if (tx.dialect().isTransient(e)) {
                throw e; // the layer reruns the whole migration
              }
              throw new MigrationException(
                  m.file(),
                  "statement at line " + s.line() + " failed: " + SqlErrors.describe(e),
                  e);
            }
          }
          tx.update(
              "INSERT INTO "
                  + SCHEMA_VERSION_TABLE
                  + " (version, name, file, checksum, applied_at_ms) VALUES (?, ?, ?, ?, ?)",
              m.version(),
              m.name(),
              m.file(),
              m.checksum(),
              db.clock().millis());
          log.info("applied migration {} to {}", m.file(), db.url());
          return true;
        });
  }

  private record Applied(int version, String file, String checksum) {}

  private static Map<Integer, Applied> applied(Database db) {
    Map<Integer, Applied> out = new HashMap<>();
    db.read(
            tx ->
                tx.query(
                    "SELECT version, file, checksum FROM " + SCHEMA_VERSION_TABLE,
                    rs -> new Applied(rs.getInt(1), rs.getString(2), rs.getString(3))))
        .forEach(a -> out.put(a.version(), a));
    return out;
  }

  private static void validate(List<Migration> known, Map<Integer, Applied> applied) {
    Map<Integer, Migration> byVersion = new HashMap<>();
    known.forEach(m -> byVersion.put(m.version(), m));
    int newest = known.isEmpty() ? 0 : known.get(known.size() - 1).version();
    for (Applied a : new TreeMap<>(applied).values()) {
      Migration m = byVersion.get(a.version());
      if (m == null) {
        throw new MigrationException(
            a.file(),
            a.version() > newest
                ? "the database is at schema version "
                    + a.version()
                    + ", newer than this build (newest migration V"
                    + newest
                    + ")"
                : "was applied to the database but is missing from this build");
      }
      if (!m.checksum().equals(a.checksum())) {
        throw new MigrationException(
            m.file(), "was changed after it was applied; add a new migration instead");
      }
    }
  }

  private static List<Migration> sortedUnique(List<Migration> migrations) {
    List<Migration> sorted = new ArrayList<>(migrations);
    sorted.sort(Comparator.comparingInt(Migration::version));
    for (int i = 1; i < sorted.size(); i++) {
      if (sorted.get(i).version() == sorted.get(i - 1).version()) {
        throw new MigrationException(
            sorted.get(i).file(), "has the same version as " + sorted.get(i - 1).file());
      }
    }
    return Collections.unmodifiableList(sorted);
  }

  private static boolean tableExists(Tx tx) throws SQLException {
    try (var rs = tx.connection().getMetaData().getTables(null, null, SCHEMA_VERSION_TABLE, null)) {
      return rs.next();
    }
  }

  private static List<Migration> loadDirectory(Path dir) {
    if (!Files.isDirectory(dir)) {
      throw new DatabaseException("migration directory " + dir + " does not exist");
    }
    try (Stream<Path> files = Files.list(dir)) {
      List<Migration> out = new ArrayList<>();
      for (Path f : files.filter(p -> p.getFileName().toString().endsWith(".sql")).toList()) {
        out.add(
            Migration.fromFile(
                f.getFileName().toString(), Files.readString(f, StandardCharsets.UTF_8)));
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read migrations in " + dir, e);
    }
  }

  private static List<Migration> loadClasspath(String folder) {
    ClassLoader loader = Migrations.class.getClassLoader();
    URL url = loader.getResource(folder);
    if (url == null) {
      throw new DatabaseException("no migrations on the classpath at " + folder + "/");
    }
    try {
      List<String> names = new ArrayList<>();
      if ("file".equals(url.getProtocol())) {
        try (Stream<Path> files = Files.list(Path.of(url.toURI()))) {
          files.map(p -> p.getFileName().toString()).forEach(names::add);
        }
      } else if ("jar".equals(url.getProtocol())) {
        JarURLConnection connection = (JarURLConnection) url.openConnection();
        connection.setUseCaches(false);
        try (JarFile jar = connection.getJarFile()) {
          String prefix = folder + "/";
          for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
            String entry = e.nextElement().getName();
            if (entry.startsWith(prefix) && entry.indexOf('/', prefix.length()) < 0) {
              names.add(entry.substring(prefix.length()));
            }
          }
        }
      } else {
        throw new DatabaseException("cannot list migrations at " + url);
      }
      List<Migration> out = new ArrayList<>();
      for (String name : names) {
        if (name.endsWith(".sql")) {
          try (InputStream in = loader.getResourceAsStream(folder + "/" + name)) {
            out.add(
                Migration.fromFile(name, new String(in.readAllBytes(), StandardCharsets.UTF_8)));
          }
        }
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read migrations at " + url, e);
    } catch (URISyntaxException e) {
      throw new DatabaseException("cannot list migrations at " + url, e);
    }
  }
}
