package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One core per data directory: a second lock of a held directory is refused with one line naming
 * the directory and the holder's pid; once the holder let go, or was killed, the next one takes the
 * directory.
 */
class DataDirLockTest {
  @TempDir Path dir;

  private String pidInFile() throws Exception {
    return Files.readString(dir.resolve(DataDirLock.FILE_NAME)).trim();
  }

  @Test
  void aSecondLockIsRefusedNamingTheDirectoryAndPidAndTakesItOnceTheFirstLetGo() throws Exception {
    String pid = Long.toString(ProcessHandle.current().pid());
    DataDirLock first = DataDirLock.acquire(dir);
    assertThat(pidInFile()).isEqualTo(pid);
    assertThatThrownBy(() -> DataDirLock.acquire(dir))
        .isInstanceOf(DataDirLock.InUseException.class)
        .hasMessage(
            "data directory "
                + dir.toAbsolutePath().normalize()
                + " is in use by another core (pid "
                + pid
                + "): stop that core or give another --data");
    first.close();
    try (DataDirLock second = DataDirLock.acquire(dir)) {
      assertThat(pidInFile()).isEqualTo(pid);
    }
  }

  @Test
  void theLockOfAKilledProcessIsTakenOver() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process holder =
        new ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                DataDirLockHolder.class.getName(),
                dir.toString())
            .redirectErrorStream(true)
            .start();
    try {
      BufferedReader out =
          new BufferedReader(
              new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
      String line;
      while ((line = out.readLine()) != null && !line.startsWith("locked ")) {
        // the holder's JVM may log before it holds the lock
      }
      assertThat(line).as("the holder's output").isNotNull();
      assertThat(pidInFile()).isEqualTo(Long.toString(holder.pid()));
      assertThatThrownBy(() -> DataDirLock.acquire(dir))
          .isInstanceOf(DataDirLock.InUseException.class)
          .hasMessageContaining("(pid " + holder.pid() + ")")
          .hasMessageContaining(dir.toAbsolutePath().normalize().toString());
    } finally {
      holder.destroyForcibly(); // SIGKILL: no shutdown hook, the file keeps its pid
      assertThat(holder.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(pidInFile()).isEqualTo(Long.toString(holder.pid()));
    try (DataDirLock taken = DataDirLock.acquire(dir)) {
      assertThat(pidInFile()).isEqualTo(Long.toString(ProcessHandle.current().pid()));
    }
  }
}
