package org.rhumbatron.checker;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The database a check runs on, and its outage: a SQLite file on a small tmpfs that the check fills
 * (a full disk), a private PostgreSQL cluster that the check stops at once and starts again, or a
 * database of the operator's own, which the check does not break.
 */
abstract class CheckDatabase implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(CheckDatabase.class);

  static CheckDatabase of(String spec) {
    return switch (spec) {
      case "sqlite" -> new Sqlite();
      case "postgres" -> new PrivatePostgres();
      default -> {
        if (!spec.startsWith("jdbc:sqlite:") && !spec.startsWith("jdbc:postgresql:")) {
          throw new IllegalArgumentException(
              "--db must be sqlite, postgres, jdbc:sqlite:PATH or jdbc:postgresql://HOST/DB, got "
                  + spec);
        }
        yield new Given(spec);
      }
    };
  }

  /** Makes the database under {@code dir}; returns its JDBC URL. */
  abstract String start(Path dir) throws Exception;

  /** The fault kind that breaks this database, or null when the check must not break it. */
  abstract FaultPlan.Kind outageKind();

  /** The database unusable for {@code millis}, then usable again. */
  abstract void outage(long millis) throws Exception;

  abstract String describe();

  /** Whether the database takes one core only (SQLite). */
  boolean oneNodeOnly() {
    return false;
  }

  boolean supports(FaultPlan.Kind kind) {
    boolean databaseFault = kind == FaultPlan.Kind.DB_RESTART || kind == FaultPlan.Kind.DISK_FULL;
    return !databaseFault || kind == outageKind();
  }

  @Override
  public void close() throws Exception {}

  /** SQLite on its own tmpfs, so that filling it is a full disk for core and nothing else. */
  static final class Sqlite extends CheckDatabase {
    static final String SIZE = "1g";
    private Path mount;

    @Override
    String start(Path dir) throws Exception {
      Path m = dir.resolve("db");
      Files.createDirectories(m);
      run(List.of("mount", "-t", "tmpfs", "-o", "size=" + SIZE, "tmpfs", m.toString()));
      mount = m;
      return "jdbc:sqlite:" + m.resolve("check.db");
    }

    @Override
    FaultPlan.Kind outageKind() {
      return FaultPlan.Kind.DISK_FULL;
    }

    @Override
    void outage(long millis) throws Exception {
      Path filler = mount.resolve("filler");
      byte[] block = new byte[1 << 20];
      try (OutputStream out = Files.newOutputStream(filler)) {
        while (true) {
          out.write(block);
        }
      } catch (IOException full) {
        log.info("disk full: {} bytes of filler", Files.size(filler));
      }
      try {
        Thread.sleep(millis);
      } finally {
        Files.delete(filler);
      }
    }

    @Override
    String describe() {
      return "sqlite";
    }

    @Override
    boolean oneNodeOnly() {
      return true;
    }

    /** Keeps the database beside the run (as {@code check.db}) before the tmpfs goes away. */
    @Override
    public void close() throws Exception {
      if (mount != null) {
        for (String name : List.of("check.db", "check.db-wal", "check.db-shm")) {
          Path file = mount.resolve(name);
          if (Files.exists(file)) {
            Files.copy(file, mount.getParent().resolve(name), StandardCopyOption.REPLACE_EXISTING);
          }
        }
        run(List.of("umount", "-l", mount.toString()));
        mount = null;
      }
    }
  }

  /**
   * A cluster of its own, made with initdb and run with pg_ctl as the postgres user when the check
   * runs as root (PostgreSQL refuses to run as root).
   */
  static final class PrivatePostgres extends CheckDatabase {
    private Path pgData;
    private Path bin;
    private int port;

    @Override
    String start(Path dir) throws Exception {
      bin = binDir();
      // Outside --data: the postgres user must reach it, and --data may be private to root.
      Path parent =
          Files.createTempDirectory(
              "rhumbatron-check-pg-",
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
      pgData = parent.resolve("data");
      port = CheckCores.freePort();
      if (asRoot()) {
        run(List.of("chown", "postgres:postgres", parent.toString()));
      }
      pg(List.of("initdb", "-D", pgData.toString(), "-A", "trust", "-U", "postgres", "--no-sync"));
      Files.writeString(dir.resolve("postgres-data-dir"), pgData + "\n");
      startServer();
      try (Connection admin =
              DriverManager.getConnection(
                  "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres");
          Statement st = admin.createStatement()) {
        st.execute("CREATE DATABASE rhumbatron_check");
      }
      return "jdbc:postgresql://127.0.0.1:" + port + "/rhumbatron_check?user=postgres";
    }

    private void startServer() throws Exception {
      pg(
          List.of(
              "pg_ctl",
              "-D",
              pgData.toString(),
              "-l",
              pgData.getParent().resolve("postgres.log").toString(),
              "-w",
              "-o",
              "-p " + port + " -k " + pgData + " -c listen_addresses=127.0.0.1",
              "start"));
    }

    @Override
    FaultPlan.Kind outageKind() {
      return FaultPlan.Kind.DB_RESTART;
    }

    /** Immediate stop: connections cut, no checkpoint, recovery from the WAL on start. */
    @Override
    void outage(long millis) throws Exception {
      pg(List.of("pg_ctl", "-D", pgData.toString(), "-m", "immediate", "-w", "stop"));
      Thread.sleep(millis);
      startServer();
    }

    @Override
    String describe() {
      return "postgres (private cluster on port " + port + ")";
    }

    @Override
    public void close() throws Exception {
      if (pgData == null) {
        return;
      }
      try {
        pg(List.of("pg_ctl", "-D", pgData.toString(), "-m", "fast", "-w", "stop"));
      } catch (IOException e) {
        log.warn("stopping the private PostgreSQL: {}", e.getMessage());
      }
      try (Stream<Path> files = Files.walk(pgData.getParent())) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
      pgData = null;
    }

    private void pg(List<String> command) throws Exception {
      List<String> full = new ArrayList<>();
      if (asRoot()) {
        full.addAll(List.of("runuser", "-u", "postgres", "--"));
      }
      full.add(bin.resolve(command.get(0)).toString());
      full.addAll(command.subList(1, command.size()));
      run(full);
    }

    private static Path binDir() throws IOException {
      Path root = Path.of("/usr/lib/postgresql");
      if (Files.isDirectory(root)) {
        try (Stream<Path> versions = Files.list(root)) {
          var found =
              versions
                  .map(v -> v.resolve("bin"))
                  .filter(b -> Files.isExecutable(b.resolve("initdb")))
                  .max(Comparator.naturalOrder());
          if (found.isPresent()) {
            return found.get();
          }
        }
      }
      throw new IOException("no PostgreSQL server binaries (initdb, pg_ctl) under " + root);
    }

    private static boolean asRoot() {
      return "root".equals(System.getProperty("user.name"));
    }
  }

  /** A database the operator gave: used as is, never broken. */
  static final class Given extends CheckDatabase {
    private final String url;

    Given(String url) {
      this.url = url;
    }

    @Override
    String start(Path dir) {
      return url;
    }

    @Override
    FaultPlan.Kind outageKind() {
      return null;
    }

    @Override
    void outage(long millis) {
      throw new IllegalStateException("the check does not break a database it did not make");
    }

    @Override
    String describe() {
      return url;
    }

    @Override
    boolean oneNodeOnly() {
      return url.startsWith("jdbc:sqlite:");
    }
  }

  static void run(List<String> command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException(
          String.join(" ", command)
              + " failed: "
              + new String(out, StandardCharsets.UTF_8).strip());
    }
  }
}
