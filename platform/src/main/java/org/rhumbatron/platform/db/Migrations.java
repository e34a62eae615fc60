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
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * Versioned schema migrations: files {@code V<n>__<name>.sql} per dialect, applied by Flyway in
 * ascending order at open, each in its own transaction together with its row in {@link
 * #HISTORY_TABLE}.
 *
 * <p>Re-opening applies nothing new. A migration that fails rolls back and names its file and
 * statement; an applied migration whose file was edited, or a database newer than the code, is
 * refused at open rather than half-understood. Add a change as a new file; never edit an applied
 * one. A database made before Flyway (with {@link #LEGACY_TABLE}) is baselined at its version.
 */
public final class Migrations {

  /** Classpath folder of the shipped migrations: {@code db/<dialect>/V<n>__<name>.sql}. */
  public static final String DEFAULT_LOCATION = "db";

  /** Flyway's record of applied migrations. */
  public static final String HISTORY_TABLE = "flyway_schema_history";

  /** The record of the runner before Flyway; read once to baseline, then dropped by V18. */
  public static final String LEGACY_TABLE = "schema_version";

  private Migrations() {}

  /** Migrations in the classpath folder {@code <location>/<dialect>/}, in a directory or a jar. */
  public static MigrationSource classpath(String location) {
    return dialect -> loadClasspath(location + "/" + dialect.name());
  }

  /** Migrations in the directory {@code <root>/<dialect>/}. */
  public static MigrationSource directory(Path root) {
    return dialect -> loadDirectory(root.resolve(dialect.name()));
  }

  /** The highest applied version (a baseline counts), or 0 for an empty database. */
  public static int currentVersion(Database db) {
    return db.read(
        tx ->
            tableExists(tx.connection(), HISTORY_TABLE)
                ? (int)
                    tx.queryLong(
                        "SELECT COALESCE(MAX(CAST(version AS INTEGER)), 0) FROM "
                            + HISTORY_TABLE
                            + " WHERE success")
                : 0);
  }

  static boolean tableExists(Connection c, String table) throws SQLException {
    try (var rs = c.getMetaData().getTables(null, null, table, null)) {
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
