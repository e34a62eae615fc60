package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.app.CoreProcess;

/** Runs {@code rhumbatron core} as a real child process: start, /healthz, SIGTERM. */
class CoreCommandTest {
  private static final Pattern UP = Pattern.compile("core is up: nats (\\S+), http port (\\d+)");

  @TempDir Path data;

  @Test
  void coreStartsAPrivateServerAndStopsCleanlyOnSigterm() throws Exception {
    Process core = CoreProcess.launch("core", "--data", data.toString(), "--http", "0");
    List<String> lines = new CopyOnWriteArrayList<>();
    Thread reader = CoreProcess.pump(core, lines);
    try {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> lines.stream().anyMatch(l -> UP.matcher(l).find()) || !core.isAlive());
      String upLine = lines.stream().filter(l -> UP.matcher(l).find()).findFirst().orElseThrow();
      Matcher m = UP.matcher(upLine);
      assertThat(m.find()).isTrue();
      assertThat(lines).anyMatch(l -> l.contains("started a private nats-server"));
      assertThat(CoreServiceTest.healthz(Integer.parseInt(m.group(2)))).contains("ok");

      // SIGTERM through the handle: Process.destroy() would also close our end of its output.
      core.toHandle().destroy();
      assertThat(core.waitFor(30, TimeUnit.SECONDS)).isTrue();
      reader.join(5_000);
      assertThat(lines).as("exit %d", core.exitValue()).anyMatch(l -> l.contains("core stopped"));
      assertThat(lines)
          .as("an orderly stop logs no errors (nats-server stops after core's connections)")
          .noneMatch(l -> l.contains(" ERROR "));
      assertThat(PortProbe.accepts(java.net.URI.create(m.group(1).replace("nats", "tcp"))))
          .as("the private nats-server stops with core")
          .isFalse();
    } finally {
      core.destroyForcibly();
    }
  }

  @Test
  void aBadSettingIsOneLineNamingTheKey() throws Exception {
    Path config = data.resolve("bad.properties");
    Files.writeString(config, "router.nack-delay=soon\n");
    Process core =
        CoreProcess.launch("core", "--data", data.toString(), "--config", config.toString());
    List<String> lines = new CopyOnWriteArrayList<>();
    Thread reader = CoreProcess.pump(core, lines);
    assertThat(core.waitFor(60, TimeUnit.SECONDS)).isTrue();
    reader.join(5_000);
    assertThat(core.exitValue()).isEqualTo(2);
    assertThat(lines)
        .containsExactly(
            "rhumbatron: setting router.nack-delay: cannot parse 'soon': a positive duration"
                + " like 500ms, 30s, 5m, 2h, 7d or PT30S");
  }
}
