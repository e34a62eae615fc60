package org.rhumbatron.platform.db;

import java.io.Reader;
import java.io.StringReader;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.CoreErrorCode;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.ResourceProvider;
import org.flywaydb.core.api.exception.FlywayValidateException;
import org.flywaydb.core.api.output.ValidateOutput;
import org.flywaydb.core.api.output.ValidateResult;
import org.flywaydb.core.api.resource.LoadableResource;
import org.flywaydb.core.internal.exception.FlywayMigrateException;
import org.flywaydb.core.internal.sqlscript.FlywaySqlScriptException;
import org.postgresql.ds.PGSimpleDataSource;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * Runs {@link Migrations} with Flyway at open, on a connection of its own to the same URL, and
 * turns Flyway's errors into {@link MigrationException}s that name the file.
 *
 * <p>Two processes may open one database at once. PostgreSQL: Flyway holds an advisory lock while
 * it reads the history and applies the next migration. SQLite: Flyway takes no lock of its own but
 * does the same inside one transaction, which its connection begins IMMEDIATE: the one write lock.
 */
final class FlywayMigrator {

  /** The description of the baseline row of a database made by the runner before Flyway. */
  static final String BASELINE_DESCRIPTION = "<< " + Migrations.LEGACY_TABLE + " >>";

  private FlywayMigrator() {}

  static void apply(Database db, DatabaseUrl target, DatabaseOptions options) {
    List<Migration> known = sortedUnique(options.migrations().load(target.dialect()));
    DataSource source = dataSource(target, options.busyTimeout());
    for (int run = 1; ; run++) {
      boolean hadHistory = historyExists(db);
      Flyway flyway = configure(source, known, legacyVersion(db, known));
      refuseUnknownApplied(db, known);
      try {
        flyway.migrate();
        return;
      } catch (FlywayValidateException e) {
        refuseInvalid(flyway);
        throw describe(e, db.url());
      } catch (FlywayException e) {
        // Flyway looks for its history and creates it unlocked: a process that lost that race to
        // another fails once, and finds the history, with its lock, when it runs again.
        if (hadHistory || run == 2 || !historyExists(db)) {
          throw describe(e, db.url());
        }
      }
    }
  }

  private static Flyway configure(DataSource source, List<Migration> known, OptionalInt legacy) {
    return Flyway.configure(FlywayMigrator.class.getClassLoader())
        .dataSource(source)
        .loggers("slf4j")
        .table(Migrations.HISTORY_TABLE)
        .resourceProvider(new Scripts(known))
        .validateMigrationNaming(true)
        .ignoreMigrationPatterns("*:pending")
        // Without either history, tables made before the first open (tests make some) are no
        // schema version: a baseline at 0 lets V1 onwards run, as they ran before Flyway.
        .baselineOnMigrate(true)
        .baselineVersion(Integer.toString(legacy.orElse(0)))
        .baselineDescription(legacy.isPresent() ? BASELINE_DESCRIPTION : "<< no history >>")
        .load();
  }

  private static boolean historyExists(Database db) {
    return db.read(tx -> Migrations.tableExists(tx.connection(), Migrations.HISTORY_TABLE));
  }

  private static DataSource dataSource(DatabaseUrl target, Duration busyTimeout) {
    if (target.dialect() instanceof SqliteDialect) {
      SQLiteConfig config = new SQLiteConfig();
      config.setBusyTimeout((int) Math.min(Integer.MAX_VALUE, busyTimeout.toMillis()));
      // Flyway reads the history and applies the next migration in one transaction; IMMEDIATE makes
      // it hold the write lock from the read on, so a second process waits instead of applying it
      // too.
      config.setTransactionMode(SQLiteConfig.TransactionMode.IMMEDIATE);
      // As on the writer connection, where migrations ran before Flyway.
      config.enforceForeignKeys(true);
      config.setTempStore(SQLiteConfig.TempStore.MEMORY);
      config.setSynchronous(SQLiteConfig.SynchronousMode.NORMAL);
      SQLiteDataSource ds = new SQLiteDataSource(config);
      ds.setUrl(target.jdbcUrl());
      return ds;
    }
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(target.jdbcUrl());
    return ds;
  }

  /**
   * The version of a database made by the runner before Flyway, checked against the files like an
   * applied history; empty when Flyway keeps the history already or the database is new.
   */
  private static OptionalInt legacyVersion(Database db, List<Migration> known) {
    record Row(int version, String file, String checksum) {}
    List<Row> rows =
        db.read(
            tx ->
                Migrations.tableExists(tx.connection(), Migrations.LEGACY_TABLE)
                        && !Migrations.tableExists(tx.connection(), Migrations.HISTORY_TABLE)
                    ? tx.query(
                        "SELECT version, file, checksum FROM "
                            + Migrations.LEGACY_TABLE
                            + " ORDER BY version",
                        rs -> new Row(rs.getInt(1), rs.getString(2), rs.getString(3)))
                    : List.of());
    Map<Integer, Migration> byVersion = byVersion(known);
    for (Row row : rows) {
      Migration m = byVersion.get(row.version());
      if (m == null) {
        throw unknownApplied(row.version(), row.file(), known);
      }
      if (!m.checksum().equals(row.checksum())) {
        throw changedAfterApplied(m.file());
      }
    }
    return rows.isEmpty()
        ? OptionalInt.empty()
        : OptionalInt.of(rows.get(rows.size() - 1).version());
  }

  /** An applied version this build has no file for: a newer build ran, or a file was removed. */
  private static void refuseUnknownApplied(Database db, List<Migration> known) {
    record Row(int version, String file) {}
    List<Row> applied =
        db.read(
            tx ->
                Migrations.tableExists(tx.connection(), Migrations.HISTORY_TABLE)
                    ? tx.query(
                        "SELECT CAST(version AS INTEGER), script FROM "
                            + Migrations.HISTORY_TABLE
                            + " WHERE success AND type <> 'BASELINE' AND version IS NOT NULL"
                            + " ORDER BY CAST(version AS INTEGER)",
                        rs -> new Row(rs.getInt(1), rs.getString(2)))
                    : List.of());
    Map<Integer, Migration> byVersion = byVersion(known);
    for (Row row : applied) {
      if (!byVersion.containsKey(row.version())) {
        throw unknownApplied(row.version(), row.file(), known);
      }
    }
  }

  private static void refuseInvalid(Flyway flyway) {
    ValidateResult result;
    try {
      result = flyway.validateWithResult();
    } catch (FlywayException e) {
      throw describe(e, "migrations");
    }
    for (ValidateOutput invalid : result.invalidMigrations) {
      String file =
          invalid.filepath == null || invalid.filepath.isEmpty() ? null : invalid.filepath;
      if (invalid.errorDetails.errorCode == CoreErrorCode.CHECKSUM_MISMATCH && file != null) {
        throw changedAfterApplied(file);
      }
      throw new MigrationException(
          file != null ? file : "V" + invalid.version, invalid.errorDetails.errorMessage);
    }
  }

  private static MigrationException unknownApplied(
      int version, String file, List<Migration> known) {
    int newest = known.isEmpty() ? 0 : known.get(known.size() - 1).version();
    return new MigrationException(
        file,
        version > newest
            ? "the database is at schema version "
                + version
                + ", newer than this build (newest migration V"
                + newest
                + ")"
            : "was applied to the database but is missing from this build");
  }

  private static MigrationException changedAfterApplied(String file) {
    return new MigrationException(
        file, "was changed after it was applied; add a new migration instead");
  }

  /** Flyway's failure as a {@link MigrationException} naming the file, line and SQL error. */
  private static DatabaseException describe(FlywayException e, String where) {
    FlywayMigrateException failed = causeOf(e, FlywayMigrateException.class);
    String file =
        failed != null && failed.getMigration() != null ? failed.getMigration().getScript() : null;
    FlywaySqlScriptException statement = causeOf(e, FlywaySqlScriptException.class);
    if (file == null && statement != null && statement.getResource() != null) {
      file = statement.getResource().getFilename();
    }
    if (file == null) {
      return new DatabaseException("migrating " + where + " failed: " + e.getMessage(), e);
    }
    SQLException sql = causeOf(e, SQLException.class);
    if (statement != null && sql != null) {
      return new MigrationException(
          file,
          "statement at line " + statement.getLineNumber() + " failed: " + SqlErrors.describe(sql),
          e);
    }
    return new MigrationException(file, e.getMessage(), e);
  }

  private static <T extends Throwable> T causeOf(Throwable e, Class<T> type) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
    }
    return null;
  }

  private static Map<Integer, Migration> byVersion(List<Migration> known) {
    Map<Integer, Migration> out = new HashMap<>();
    known.forEach(m -> out.put(m.version(), m));
    return out;
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
    return List.copyOf(sorted);
  }

  /** The loaded migrations as Flyway's resources, named by their file names. */
  private record Scripts(List<Migration> migrations) implements ResourceProvider {

    @Override
    public LoadableResource getResource(String name) {
      return migrations.stream()
          .filter(m -> m.file().equals(name))
          .findFirst()
          .map(Script::new)
          .orElse(null);
    }

    @Override
    public Collection<LoadableResource> getResources(String prefix, String... suffixes) {
      List<LoadableResource> out = new ArrayList<>();
      for (Migration m : migrations) {
        for (String suffix : suffixes) {
          if (m.file().startsWith(prefix) && m.file().endsWith(suffix)) {
            out.add(new Script(m));
            break;
          }
        }
      }
      return out;
    }
  }

  private static final class Script extends LoadableResource {
    private final Migration migration;

    Script(Migration migration) {
      this.migration = migration;
    }

    @Override
    public Reader read() {
      return new StringReader(migration.sql());
    }

    @Override
    public String getAbsolutePath() {
      return migration.file();
    }

    @Override
    public String getAbsolutePathOnDisk() {
      return migration.file();
    }

    @Override
    public String getFilename() {
      return migration.file();
    }

    @Override
    public String getRelativePath() {
      return migration.file();
    }
  }
}
