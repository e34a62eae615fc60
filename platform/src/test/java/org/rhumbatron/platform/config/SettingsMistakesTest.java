package org.rhumbatron.platform.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The natural mistakes of a settings file or environment: refused in one line that says which. */
class SettingsMistakesTest {
  @TempDir Path dir;

  @Test
  void anEmptyApiTokenInTheFileIsRefused() throws Exception {
    Path file = dir.resolve("core.properties");
    Files.writeString(file, "api.token=\n");
    assertThatThrownBy(() -> Settings.load(file, Map.of()))
        .isInstanceOf(SettingsException.class)
        .hasMessageStartingWith("setting api.token: is empty")
        .hasMessageContaining("leave out both api.token and RHUMBATRON_API_TOKEN");
  }

  @Test
  void anEmptyApiTokenVariableIsRefused() {
    assertThatThrownBy(() -> Settings.load(null, Map.of("RHUMBATRON_API_TOKEN", " ")))
        .isInstanceOf(SettingsException.class)
        .hasMessageStartingWith("setting api.token: is empty");
  }

  @Test
  void anAbsentApiTokenIsNoneAsBefore() {
    assertThat(Settings.load(null, Map.of()).get(Settings.API_TOKEN)).isEmpty();
  }

  @Test
  void aMistypedVariableIsRefusedWithTheNearestName() {
    assertThatThrownBy(() -> Settings.load(null, Map.of("RHUMBATRON_API_TOKN", "t")))
        .isInstanceOf(SettingsException.class)
        .hasMessageStartingWith(
            "environment variable RHUMBATRON_API_TOKN names no setting;"
                + " did you mean RHUMBATRON_API_TOKEN?");
    assertThatThrownBy(() -> Settings.load(null, Map.of("RHUMBATRON_ZZZZZZZZZZZZ", "t")))
        .hasMessageStartingWith("environment variable RHUMBATRON_ZZZZZZZZZZZZ names no setting")
        .hasMessageNotContaining("did you mean");
  }

  @Test
  void theToolsOwnVariablesAndOtherProgramsVariablesPass() {
    Map<String, String> env =
        Map.of(
            "RHUMBATRON_URL", "http://127.0.0.1:8080",
            "RHUMBATRON_CACERT", "/etc/rhumbatron/ca.pem",
            "RHUMBATRON_JAVA_OPTS", "-Xmx1g",
            "RHUMBATRON_LOG_LEVEL", "DEBUG",
            "RHUMBATRONX", "not ours",
            "PATH", "/bin");
    assertThat(Settings.load(null, env).get(Settings.API_TOKEN)).isEmpty();
  }

  @Test
  void aMistypedKeyInTheFileGetsTheNearestKey() throws Exception {
    Path file = dir.resolve("core.properties");
    Files.writeString(file, "api.tokn=abc\n");
    assertThatThrownBy(() -> Settings.load(file, Map.of()))
        .hasMessage("setting api.tokn: unknown key; did you mean api.token?");
  }

  @Test
  void aMissingSettingsFileIsNamed() {
    Path missing = dir.resolve("nope.properties");
    assertThatThrownBy(() -> Settings.load(missing, Map.of()))
        .hasMessage("settings file " + missing + ": no such file");
  }

  @Test
  void aDurationWithoutUnitSaysHowToWriteIt() {
    assertThatThrownBy(() -> Setting.parseDuration("180"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "no unit: write 180s for seconds (a number and a unit: 500ms, 30s, 5m, 2h, 7d,"
                + " or PT30S)");
    assertThatThrownBy(() -> Setting.parseDuration("3min"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("not a duration: a number and a unit: 500ms, 30s, 5m, 2h, 7d, or PT30S");
    assertThat(Setting.parseDuration("3m")).isEqualTo(Duration.ofMinutes(3));
    assertThat(Setting.parseDuration("PT2S")).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void streamReplicasOutside1To5IsRefused() {
    for (String bad : new String[] {"0", "6", "-1", "three"}) {
      assertThatThrownBy(() -> Settings.load(null, Map.of("RHUMBATRON_STREAMS_REPLICAS", bad)))
          .as(bad)
          .isInstanceOf(SettingsException.class)
          .hasMessageStartingWith("setting streams.replicas: ")
          .hasMessageContaining("'" + bad + "'")
          .hasMessageContaining("1..5");
    }
    assertThat(Settings.defaults().get(Settings.STREAM_REPLICAS)).isEqualTo(1);
    assertThat(
            Settings.load(null, Map.of("RHUMBATRON_STREAMS_REPLICAS", "3"))
                .get(Settings.STREAM_REPLICAS))
        .isEqualTo(3);
  }

  @Test
  void aNatsUrlListNamesItsBadEntry() {
    assertThatThrownBy(
            () ->
                Settings.load(
                    null,
                    Map.of("RHUMBATRON_NATS_URL", "nats://10.0.0.1:4222,nats:/10.0.0.2:4222")))
        .isInstanceOf(SettingsException.class)
        .hasMessageStartingWith("setting nats.url: 'nats:/10.0.0.2:4222': not a NATS URL");
    assertThatThrownBy(
            () -> Settings.load(null, Map.of("RHUMBATRON_NATS_URL", "nats://10.0.0.1:4222,,")))
        .isInstanceOf(SettingsException.class)
        .hasMessageStartingWith("setting nats.url: entry 2 of 'nats://10.0.0.1:4222,,' is empty");
    assertThat(
            Settings.load(
                    null, Map.of("RHUMBATRON_NATS_URL", " nats://10.0.0.1:4222 , 10.0.0.2:4222"))
                .get(Settings.NATS_URL))
        .isEqualTo("nats://10.0.0.1:4222,10.0.0.2:4222");
    assertThat(Settings.defaults().get(Settings.NATS_URL)).isEmpty();
  }

  @Test
  void aTlsCertificateWithoutItsKeyIsRefusedNamingTheMissingOne() {
    assertThatThrownBy(() -> Settings.defaults().with(Map.of("http.tls.cert", "/etc/a.pem")))
        .isInstanceOf(SettingsException.class)
        .hasMessage(
            "setting http.tls.key: must be set too: TLS needs both http.tls.cert and"
                + " http.tls.key");
  }

  @Test
  void aBindWithASchemeAndAnUnknownReadAccessAreRefused() {
    assertThatThrownBy(() -> Settings.defaults().with(Map.of("http.bind", "http://0.0.0.0")))
        .hasMessage(
            "setting http.bind: 'http://0.0.0.0' is out of range: a host name or an IP address"
                + " like 127.0.0.1, 0.0.0.0 or ::");
    assertThatThrownBy(() -> Settings.defaults().with(Map.of("api.reads", "closed")))
        .hasMessage("setting api.reads: cannot parse 'closed': one of auto, open, credential");
    assertThat(Settings.defaults().with(Map.of("http.bind", "::")).get(Settings.HTTP_BIND))
        .isEqualTo("::");
  }
}
