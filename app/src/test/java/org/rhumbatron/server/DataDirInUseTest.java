package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.app.Main;

/**
 * The launcher's {@code core} and {@code demo} on a data directory or SQLite file another core
 * holds: refused in one line naming it and the holder, before anything is started or written.
 */
class DataDirInUseTest {
  @TempDir Path dir;

  /** The one line {@code rhumbatron ARGS} prints on stderr; its exit code is 2. */
  private static String refusal(String... args) {
    StringWriter err = new StringWriter();
    int code = Main.run(Map.of(), new PrintWriter(new StringWriter()), new PrintWriter(err), args);
    assertThat(code).as(err.toString()).isEqualTo(2);
    return err.toString().strip();
  }

  @Test
  void coreAndDemoOnADirectoryInUseAreRefusedInOneLineNamingItAndThePid() throws Exception {
    String expected =
        "rhumbatron: data directory "
            + dir.toAbsolutePath().normalize()
            + " is in use by another core (pid "
            + ProcessHandle.current().pid()
            + "): stop that core or give another --data";
    try (DataDirLock held = DataDirLock.acquire(dir)) {
      assertThat(refusal("core", "--data", dir.toString(), "--http", "0")).isEqualTo(expected);
      assertThat(refusal("demo", "--data", dir.toString(), "--changes", "1")).isEqualTo(expected);
    }
    // Nothing of either was started or written there.
    try (var files = Files.list(dir)) {
      assertThat(files.map(f -> f.getFileName().toString())).containsExactly("core.lock");
    }
  }

  /**
   * SQLite is one node. A second core on the same SQLite file, from another data directory, is
   * refused in one line naming the file and the running core (pid, node id), and writes nothing: no
   * database file, no NATS store.
   */
  @Test
  @org.junit.jupiter.api.Timeout(60) // a core that is not refused runs until stopped
  void aSecondCoreOnOneSqliteFileIsRefusedNamingTheFileAndTheRunningCore(@TempDir Path other)
      throws Exception {
    Path database = dir.resolve("shared.db");
    try (DataDirLock held = DataDirLock.sqlite(database, "node-a")) {
      assertThat(
              refusal(
                  "core", "--data", other.toString(), "--db", database.toString(), "--http", "0"))
          .isEqualTo(
              "rhumbatron: SQLite database "
                  + database.toAbsolutePath().normalize()
                  + " is in use by another core (pid "
                  + ProcessHandle.current().pid()
                  + ", node node-a): SQLite runs one core; stop that core, or run several on"
                  + " PostgreSQL");
    }
    assertThat(database).doesNotExist();
    try (var files = Files.list(other)) {
      assertThat(files.map(f -> f.getFileName().toString()))
          .as("nothing but the data directory's own lock")
          .containsExactly("core.lock");
    }
  }
}
