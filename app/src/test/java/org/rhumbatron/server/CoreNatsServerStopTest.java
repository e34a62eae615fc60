package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.app.CoreProcess;

/**
 * How core's private nats-server stops: after core's connections on a terminal's Ctrl-C, and with
 * core when core is killed by SIGKILL (no orphan server).
 */
class CoreNatsServerStopTest {
  /** The exit code of a JVM stopped by SIGINT, as for any process: 128 + 2. */
  static final int EXIT_AFTER_SIGINT = 130;

  @TempDir Path data;

  @Test
  void aCoreKilledBySigkillLeavesNoNatsServerBehind() throws Exception {
    Process core = CoreProcess.launch("core", "--data", data.toString(), "--http", "0");
    List<String> lines = new CopyOnWriteArrayList<>();
    CoreProcess.pump(core, lines);
    try {
      awaitUp(core, lines);
      assertThat(processesOfDataDir()).as("the private nats-server runs").isNotEmpty();

      core.toHandle().destroyForcibly(); // SIGKILL: no shutdown hook, no finally

      assertThat(core.waitFor(10, TimeUnit.SECONDS)).isTrue();
      await()
          .atMost(Duration.ofSeconds(5))
          .untilAsserted(
              () ->
                  assertThat(processesOfDataDir())
                      .as("nats-server and its supervisor end with their JVM")
                      .isEmpty());
    } finally {
      core.destroyForcibly();
      killProcessesOfDataDir();
    }
  }

  @Test
  void ctrlCToCoresProcessGroupStopsCoreThenNatsServerWithoutErrors() throws Exception {
    Process core = CoreProcess.launchInOwnGroup("core", "--data", data.toString(), "--http", "0");
    List<String> lines = new CopyOnWriteArrayList<>();
    Thread reader = CoreProcess.pump(core, lines);
    try {
      awaitUp(core, lines);

      // A terminal's Ctrl-C: SIGINT to every process of the foreground process group.
      Process kill = new ProcessBuilder("kill", "-INT", "--", "-" + core.pid()).start();
      assertThat(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0).isTrue();

      assertThat(core.waitFor(30, TimeUnit.SECONDS)).as("core exits").isTrue();
      reader.join(5_000);
      assertThat(core.exitValue()).as("output: %s", lines).isEqualTo(EXIT_AFTER_SIGINT);
      assertThat(lines).anyMatch(l -> l.contains("core stopped"));
      assertThat(lines)
          .as("nats-server stopped after core's connections closed")
          .noneMatch(l -> l.contains(" ERROR "));
      await()
          .atMost(Duration.ofSeconds(5))
          .untilAsserted(() -> assertThat(processesOfDataDir()).isEmpty());
    } finally {
      core.destroyForcibly();
      killProcessesOfDataDir();
    }
  }

  private static void awaitUp(Process core, List<String> lines) {
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> lines.stream().anyMatch(l -> l.contains("core is up")) || !core.isAlive());
    assertThat(core.isAlive()).as("core runs: %s", lines).isTrue();
  }

  /** The processes whose command line names the data directory: nats-server, its supervisor. */
  private List<ProcessHandle> processesOfDataDir() {
    String dir = data.toString();
    return ProcessHandle.allProcesses()
        .filter(p -> p.isAlive())
        .filter(p -> p.info().commandLine().map(c -> c.contains(dir)).orElse(false))
        .filter(p -> p.info().command().map(c -> !c.endsWith("/java")).orElse(true))
        .toList();
  }

  private void killProcessesOfDataDir() {
    processesOfDataDir().forEach(ProcessHandle::destroyForcibly); // only when a test failed
  }
}
