package org.rhumbatron.platform.natsserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nats.client.Connection;
import io.nats.client.Nats;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PrivateNatsServerTest {
  @TempDir Path data;

  @Test
  void aMissingBinaryIsOneLineNamingTheDebianPackage() {
    assertThatThrownBy(() -> PrivateNatsServer.findBinary("/nonexistent", List.of()))
        .isInstanceOf(PrivateNatsServer.NatsServerException.class)
        .hasMessageContaining("apt-get install -y nats-server")
        .hasMessageNotContaining("\n");
  }

  @Test
  void startsWithJetStreamAndItsStoreUnderTheDataDirectory() throws Exception {
    try (PrivateNatsServer server = PrivateNatsServer.start(data, 0);
        Connection c = Nats.connect(server.url())) {
      assertThat(server.url()).doesNotEndWith(":4222");
      assertThat(server.storeDir()).isEqualTo(data.resolve("nats"));
      assertThat(c.jetStreamManagement().getAccountStatistics()).isNotNull();
    }
  }

  @Test
  void runsInAProcessGroupOfItsOwnAndStopsWhenClosed() throws Exception {
    PrivateNatsServer server = PrivateNatsServer.start(data, 0);
    long pid = server.serverPid();
    try {
      assertThat(pid).as("the supervisor's nats-server child").isPositive();
      assertThat(processGroup(pid))
          .as("a terminal's Ctrl-C to the JVM's group does not reach the server")
          .isNotEqualTo(processGroup(ProcessHandle.current().pid()));
    } finally {
      server.close();
    }
    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
        .as("close() waits until the server exited")
        .isFalse();
  }

  /** Field 5 of /proc/PID/stat, after the parenthesised command name. */
  static long processGroup(long pid) throws java.io.IOException {
    String stat = java.nio.file.Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    return Long.parseLong(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[2]);
  }

  @Test
  void aJvmStoppedBySigtermStopsItsServer() throws Exception {
    Process jvm =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                StartAndWait.class.getName(),
                data.toString())
            .redirectErrorStream(true)
            .start();
    long serverPid = -1;
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(jvm.getInputStream()));
      String line;
      while ((line = out.readLine()) != null) {
        if (line.startsWith("nats-server pid ")) {
          serverPid = Long.parseLong(line.substring("nats-server pid ".length()).trim());
          break;
        }
      }
      assertThat(serverPid).as("the child JVM started a server").isPositive();
      ProcessHandle server = ProcessHandle.of(serverPid).orElseThrow();

      jvm.destroy(); // SIGTERM: shutdown hooks run, the main thread's finally does not

      assertThat(jvm.waitFor(20, TimeUnit.SECONDS)).as("the child JVM exits").isTrue();
      assertThat(server.onExit().get(20, TimeUnit.SECONDS).isAlive())
          .as("its nats-server exits with it")
          .isFalse();
    } finally {
      jvm.destroyForcibly();
      if (serverPid > 0) {
        ProcessHandle.of(serverPid).ifPresent(ProcessHandle::destroyForcibly); // when this failed
      }
    }
  }

  /** The child JVM: starts a server, says its pid, and waits to be killed. */
  public static final class StartAndWait {
    public static void main(String[] args) throws Exception {
      PrivateNatsServer server = PrivateNatsServer.start(Path.of(args[0]), 0);
      System.out.println("nats-server pid " + server.serverPid());
      System.out.flush();
      Thread.sleep(Long.MAX_VALUE);
      server.close(); // not reached: the test stops this JVM with SIGTERM
    }
  }
}
