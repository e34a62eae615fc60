package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.app.CoreProcess;
import org.rhumbatron.app.Main;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.config.SettingsException;
import org.rhumbatron.testkit.nats.NatsServer;

/**
 * {@code rhumbatron core} with {@code --nats} where no server answers: with {@code
 * --nats-wait=false} it exits in one line naming the URL, and a bad value of the setting or the
 * option is one line naming the key.
 */
class CoreCommandNatsDownTest {
  @TempDir Path data;

  @Test
  void theCoreCommandWithNatsWaitFalseExitsWithOneLineNamingTheUrl() throws Exception {
    String url = "nats://127.0.0.1:" + NatsServer.freePort();
    Process core =
        CoreProcess.launch(
            "core", "--nats", url, "--nats-wait=false", "--data", data.toString(), "--http", "0");
    List<String> lines = new CopyOnWriteArrayList<>();
    Thread reader = CoreProcess.pump(core, lines);
    try {
      assertThat(core.waitFor(60, TimeUnit.SECONDS)).as("core exits").isTrue();
      reader.join(5_000);
      assertThat(core.exitValue()).isEqualTo(2);
      assertThat(lines).anyMatch(l -> l.startsWith("rhumbatron: ") && l.contains(url));
      assertThat(lines).noneMatch(l -> l.contains("core is up"));
    } finally {
      core.destroyForcibly();
    }
  }

  @Test
  void aBadValueOfTheSettingOrTheOptionIsAnErrorNamingTheKey() throws Exception {
    assertThatThrownBy(() -> Settings.defaults().with(Map.of("nats.wait-at-start", "maybe")))
        .isInstanceOf(SettingsException.class)
        .hasMessage("setting nats.wait-at-start: cannot parse 'maybe': true or false");
    assertThat(Settings.defaults().get(Settings.NATS_WAIT_AT_START)).isTrue();

    Path config = data.resolve("bad.properties");
    Files.writeString(config, "nats.wait-at-start=sometimes\n");
    assertThat(runCore("--config", config.toString()))
        .isEqualTo(
            "rhumbatron: setting nats.wait-at-start: cannot parse 'sometimes': true or false");
    assertThat(runCore("--nats-wait=maybe"))
        .isEqualTo("rhumbatron: setting nats.wait-at-start: cannot parse 'maybe': true or false");
  }

  /** Runs {@code core} in this JVM with a URL where nothing listens; returns what it printed. */
  private String runCore(String... extra) {
    StringWriter err = new StringWriter();
    String[] args =
        java.util.stream.Stream.concat(
                java.util.stream.Stream.of(
                    "core",
                    "--nats",
                    "nats://127.0.0.1:" + NatsServer.freePort(),
                    "--data",
                    data.toString(),
                    "--http",
                    "0"),
                java.util.stream.Stream.of(extra))
            .toArray(String[]::new);
    int code = Main.run(Map.of(), new PrintWriter(new StringWriter()), new PrintWriter(err), args);
    assertThat(code).isEqualTo(2);
    return err.toString().strip();
  }
}
