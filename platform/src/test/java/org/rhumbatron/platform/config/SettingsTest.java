package org.rhumbatron.platform.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SettingsTest {
  @TempDir Path dir;

  @Test
  void defaultsAreTheSeedNumbers() {
    Settings s = Settings.defaults();
    assertThat(s.get(Settings.EVENT_STREAM_MAX_AGE)).isEqualTo(Duration.ofDays(7));
    assertThat(s.get(Settings.DUPLICATE_WINDOW)).isEqualTo(Duration.ofHours(2));
    assertThat(s.get(Settings.COMMAND_STREAM_MAX_AGE)).isEqualTo(Duration.ofDays(14));
    assertThat(s.get(Settings.OUTBOX_PUBLISH_BATCH)).isEqualTo(100);
    assertThat(s.get(Settings.OUTBOX_BACKOFF_INITIAL)).isEqualTo(Duration.ofSeconds(1));
    assertThat(s.get(Settings.OUTBOX_BACKOFF_MAX)).isEqualTo(Duration.ofMinutes(5));
    assertThat(s.get(Settings.OUTBOX_MAX_ATTEMPTS)).isEqualTo(10);
    assertThat(s.get(Settings.ALARM_FIRES_PER_DAY)).isEqualTo(2_000);
    assertThat(s.get(Settings.ROUTER_FETCH_BATCH)).isEqualTo(100);
    assertThat(s.get(Settings.ROUTER_NACK_DELAY)).isEqualTo(Duration.ofSeconds(30));
    assertThat(s.get(Settings.ROUTER_ACK_WAIT)).isEqualTo(Duration.ofMinutes(5));
    assertThat(s.get(Settings.APPLY_DELTA_CALLS_PER_RUN)).isEqualTo(15);
    assertThat(s.get(Settings.BATCH_FAILURE_LIMIT)).isEqualTo(5);
    assertThat(s.get(Settings.PROCESSED_EVENTS_KEEP)).isEqualTo(Duration.ofDays(14));
    assertThat(s.get(Settings.PROCESSED_EVENTS_PURGE_MAX)).isEqualTo(5_000);
    assertThat(s.get(Settings.ARCHIVE_EXPIRY)).isEqualTo(Duration.ofDays(365));
    assertThat(s.get(Settings.RELEASE_RECOVER_AFTER)).isEqualTo(Duration.ofMinutes(45));
    assertThat(s.get(Settings.SETTLE_QUIET_MIN)).isEqualTo(Duration.ofMinutes(3));
    assertThat(s.get(Settings.SETTLE_QUIET_MAX)).isEqualTo(Duration.ofHours(6));
    assertThat(s.get(Settings.CLEF_FLASH_CALLS_PER_DAY)).isEqualTo(200);
    assertThat(s.get(Settings.CLEF_FLASH_ABSTAIN_BELOW)).isEqualTo(0.7);
    assertThat(s.get(Settings.CLEF_FLASH_MODEL)).isEqualTo("claude-haiku-4-5");
    assertThat(s.get(Settings.CLEF_FLASH_BASE_URL)).isEqualTo("https://api.anthropic.com");
    assertThat(s.get(Settings.CLEF_FLASH_TIMEOUT)).isEqualTo(Duration.ofSeconds(2));
    assertThat(s.get(Settings.CLEF_FLASH_API_KEY_ENV)).isEqualTo("ANTHROPIC_API_KEY");
    assertThat(s.get(Settings.COMMANDS_PER_CHANGE_PER_DAY)).isEqualTo(1_000);
    assertThat(s.get(Settings.AGENTS_PER_CHANGE)).isEqualTo(8);
    assertThat(s.get(Settings.MAX_HOLD)).isEqualTo(Duration.ofMinutes(15));
    // A reading of the seed's 30 s (see the setting): a period a third of the queues' ack wait.
    assertThat(s.get(Settings.ACK_EXTEND_EVERY)).isEqualTo(Duration.ofSeconds(2));
    assertThat(s.get(Settings.QUEUE_ACK_WAIT)).isEqualTo(Duration.ofSeconds(6));
  }

  @Test
  void fileThenEnvironmentOverride() throws Exception {
    Path file = dir.resolve("core.properties");
    Files.writeString(file, "outbox.publish-batch=50\nrouter.nack-delay=45s\n");
    Settings s = Settings.load(file, Map.of("RHUMBATRON_ROUTER_NACK_DELAY", "PT1M"));
    assertThat(s.get(Settings.OUTBOX_PUBLISH_BATCH)).isEqualTo(50);
    assertThat(s.get(Settings.ROUTER_NACK_DELAY)).isEqualTo(Duration.ofMinutes(1));
  }

  @Test
  void badValuesNameTheKey() {
    assertThatThrownBy(() -> Settings.defaults().with(Map.of("outbox.publish-batch", "-3")))
        .isInstanceOf(SettingsException.class)
        .hasMessage("setting outbox.publish-batch: '-3' is out of range: a whole number > 0");
    assertThatThrownBy(() -> Settings.defaults().with(Map.of("router.nack-delay", "soon")))
        .hasMessageStartingWith("setting router.nack-delay: cannot parse 'soon'");
    assertThatThrownBy(() -> Settings.defaults().with(Map.of("router.nack-dely", "5s")))
        .hasMessage("setting router.nack-dely: unknown key; did you mean router.nack-delay?");
    assertThatThrownBy(
            () -> Settings.load(null, Map.of("RHUMBATRON_CAUSAL_CLEF_FLASH_ABSTAIN_BELOW", "1.5")))
        .hasMessageStartingWith("setting causal.clef-flash-abstain-below:");
  }

  @Test
  void clefFlashEndpointSettingsAreChecked() {
    Settings s =
        Settings.defaults()
            .with(
                Map.of(
                    "causal.clef-flash-base-url", "http://127.0.0.1:8089/",
                    "causal.clef-flash-model", "claude-haiku-4-5-20251001",
                    "causal.clef-flash-api-key-env", "RT_CLEF_KEY"));
    assertThat(s.get(Settings.CLEF_FLASH_BASE_URL)).isEqualTo("http://127.0.0.1:8089");
    assertThat(s.get(Settings.CLEF_FLASH_MODEL)).isEqualTo("claude-haiku-4-5-20251001");
    assertThat(s.get(Settings.CLEF_FLASH_API_KEY_ENV)).isEqualTo("RT_CLEF_KEY");
    assertThatThrownBy(
            () -> Settings.defaults().with(Map.of("causal.clef-flash-base-url", "api.anthropic")))
        .hasMessageStartingWith("setting causal.clef-flash-base-url: cannot parse 'api.anthropic'");
    assertThatThrownBy(() -> Settings.defaults().with(Map.of("causal.clef-flash-model", " ")))
        .hasMessageStartingWith("setting causal.clef-flash-model:");
  }

  @Test
  void aKeyWrittenWhereItsVariableNameBelongsIsNotRepeated() {
    String key = "sk-ant-api03-not-a-name";
    assertThatThrownBy(() -> Settings.defaults().with(Map.of("causal.clef-flash-api-key-env", key)))
        .isInstanceOf(SettingsException.class)
        .hasMessageStartingWith("setting causal.clef-flash-api-key-env: the value is out of range")
        .hasMessageNotContaining(key);
    assertThatThrownBy(() -> Settings.defaults().with(Settings.CLEF_FLASH_API_KEY_ENV, key))
        .hasMessageNotContaining(key);
  }

  @Test
  void conflictsAreCheckedWhenBuilt() {
    assertThatThrownBy(
            () -> Settings.defaults().with(Settings.OUTBOX_BACKOFF_MAX, Duration.ofMillis(10)))
        .hasMessageContaining("outbox.backoff-max");
    assertThatThrownBy(
            () -> Settings.defaults().with(Settings.PROCESSED_EVENTS_KEEP, Duration.ofDays(6)))
        .hasMessage("setting processed-events.keep: must not be below events.max-age");
    assertThatThrownBy(
            () -> Settings.defaults().with(Settings.DEAD_LETTERS_KEEP_CLOSED, Duration.ofDays(13)))
        .hasMessage("setting dead-letters.keep-closed: must not be below commands.max-age");
    assertThatThrownBy(
            () -> Settings.defaults().with(Settings.WORKFLOWS_KEEP_ENDED, Duration.ofDays(13)))
        .hasMessage("setting workflows.keep-ended: must not be below commands.max-age");
    assertThatThrownBy(
            () -> Settings.defaults().with(Settings.EVENT_STREAM_MAX_AGE, Duration.ofHours(1)))
        .hasMessage("setting streams.duplicate-window: must not be above events.max-age");
  }

  @Test
  void theApiTokenComesFromTheEnvironmentAndIsNeverShown() {
    Settings s = Settings.load(null, Map.of("RHUMBATRON_API_TOKEN", "tok-123"));
    assertThat(s.get(Settings.API_TOKEN)).isEqualTo("tok-123");
    assertThat(Settings.defaults().get(Settings.API_TOKEN)).isEmpty();
    assertThat(s.describe().get("api.token")).isEqualTo("(hidden)");
    assertThat(s.describe().toString()).doesNotContain("tok-123");
  }

  @Test
  void natsWaitAtStartIsTrueByDefaultAndABadValueNamesTheKey() {
    assertThat(Settings.defaults().get(Settings.NATS_WAIT_AT_START)).isTrue();
    assertThat(
            Settings.load(null, Map.of("RHUMBATRON_NATS_WAIT_AT_START", "false"))
                .get(Settings.NATS_WAIT_AT_START))
        .isFalse();
    assertThatThrownBy(() -> Settings.load(null, Map.of("RHUMBATRON_NATS_WAIT_AT_START", "no")))
        .isInstanceOf(SettingsException.class)
        .hasMessage("setting nats.wait-at-start: cannot parse 'no': true or false");
  }

  @Test
  void theWebhookRuntimeNeedsAUrl() {
    assertThat(Settings.defaults().get(Settings.AGENT_RUNTIME))
        .isEqualTo(AgentRuntimeKind.SIMULATED);
    assertThatThrownBy(() -> Settings.defaults().with(Map.of("agents.runtime", "webhook")))
        .hasMessage("setting agents.webhook.url: must be set when agents.runtime is webhook");
    assertThatThrownBy(() -> Settings.defaults().with(Map.of("agents.webhook.url", "ftp://x")))
        .hasMessageStartingWith("setting agents.webhook.url: cannot parse");
    Settings webhook =
        Settings.defaults()
            .with(
                Map.of("agents.runtime", "webhook", "agents.webhook.url", "http://127.0.0.1:9/w"));
    assertThat(webhook.get(Settings.AGENT_RUNTIME)).isEqualTo(AgentRuntimeKind.WEBHOOK);
    assertThat(webhook.get(Settings.AGENT_WEBHOOK_TIMEOUT)).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void keysAndEnvironmentNamesAreUnique() {
    Set<String> keys = new HashSet<>();
    Set<String> envs = new HashSet<>();
    for (Setting<?> s : Settings.all()) {
      assertThat(keys.add(s.key())).as(s.key()).isTrue();
      assertThat(envs.add(s.envName())).as(s.envName()).isTrue();
    }
  }
}
