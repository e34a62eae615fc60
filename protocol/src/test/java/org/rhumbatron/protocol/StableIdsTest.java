package org.rhumbatron.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Test vectors for the stable keys. The expected hashes were computed outside Java, e.g. {@code
 * printf 'chg_1\x1ftask.completed\x1ftask_1\x1f' | sha256sum | cut -c1-32}.
 */
class StableIdsTest {

  @Test
  void stableEventIdVectors() {
    assertThat(StableIds.stableEventId("chg_1", EventType.TASK_COMPLETED, "task_1", null))
        .isEqualTo("evt_01a80d48c3eb988ebf7074ef790b8bf0");
    assertThat(StableIds.stableEventId("chg_1", EventType.VERIFICATION_STARTED, null, null))
        .isEqualTo("evt_3b1a893265d5e9d817dd9e0ee11c69b1");
    assertThat(StableIds.stableEventId("chg_1", EventType.TASK_FAILED, "task_7", "dead_letter"))
        .isEqualTo("evt_fff16b8a0b0e7b98022bf41ec70ff64d");
    // printf 'chg_1\x1fchange.created\x1f\x1fcl\xc3\xa9-42': the key is hashed as UTF-8
    assertThat(StableIds.stableEventId("chg_1", EventType.CHANGE_CREATED, null, "clé-42"))
        .isEqualTo("evt_f31a3669def837e91e6b341d87451345");
  }

  @Test
  void stableEventIdTreatsAnAbsentKeyAsEmptyAndIsAValidEventId() {
    String id = StableIds.stableEventId("chg_1", EventType.TASK_COMPLETED, "task_1");

    assertThat(id)
        .isEqualTo(StableIds.stableEventId("chg_1", EventType.TASK_COMPLETED, "task_1", ""));
    assertThat(id).matches(IdFormat.EVENT_ID);
  }

  @Test
  void everyPartChangesTheId() {
    String base = StableIds.stableEventId("chg_1", EventType.TASK_COMPLETED, "task_1", "k");

    assertThat(StableIds.stableEventId("chg_2", EventType.TASK_COMPLETED, "task_1", "k"))
        .isNotEqualTo(base);
    assertThat(StableIds.stableEventId("chg_1", EventType.TASK_FAILED, "task_1", "k"))
        .isNotEqualTo(base);
    assertThat(StableIds.stableEventId("chg_1", EventType.TASK_COMPLETED, "task_2", "k"))
        .isNotEqualTo(base);
    assertThat(StableIds.stableEventId("chg_1", EventType.TASK_COMPLETED, "task_1", "j"))
        .isNotEqualTo(base);
    assertThat(StableIds.stableEventId("chg_1", EventType.TASK_COMPLETED, null, "task_1k"))
        .isNotEqualTo(StableIds.stableEventId("chg_1", EventType.TASK_COMPLETED, "task_1", "k"));
  }

  @Test
  void stableEventIdRejectsAmbiguousParts() {
    assertThatThrownBy(
            () -> StableIds.stableEventId("chg_1", EventType.TASK_READY, "t", "a\u001Fb"))
        .isInstanceOf(EnvelopeException.class)
        .hasMessageContaining("key");
    assertThatThrownBy(() -> StableIds.stableEventId(null, EventType.TASK_READY, "t", null))
        .isInstanceOf(EnvelopeException.class)
        .hasMessageContaining("/changeId");
    assertThatThrownBy(() -> StableIds.stableEventId("chg_1", EventType.TASK_READY, "", null))
        .isInstanceOf(EnvelopeException.class)
        .hasMessageContaining("/taskId");
  }

  @Test
  void randomIdsUseTheUuidsHexDigits() {
    UUID uuid = UUID.fromString("0123abcd-4567-89ef-0123-456789abcdef");

    assertThat(StableIds.randomEventId(() -> uuid))
        .isEqualTo("evt_0123abcd456789ef0123456789abcdef");
    assertThat(StableIds.randomCommandId(() -> uuid))
        .isEqualTo("cmd_0123abcd456789ef0123456789abcdef");
    assertThat(StableIds.randomEventId())
        .matches(IdFormat.EVENT_ID)
        .isNotEqualTo(StableIds.randomEventId());
  }

  @Test
  void timeOrderedIdsStartWithTheMillisecondsAndAreVersion7() {
    Instant at = Instant.parse("2026-12-03T08:00:00.123Z");
    String first = StableIds.randomEventId(at);
    String again = StableIds.randomEventId(at);
    String later = StableIds.randomEventId(at.plusMillis(1));

    String millis = String.format("%012x", at.toEpochMilli());
    assertThat(first).matches(IdFormat.EVENT_ID).startsWith("evt_" + millis).isNotEqualTo(again);
    UUID uuid =
        UUID.fromString(
            first.substring(4).replaceFirst("(.{8})(.{4})(.{4})(.{4})(.{12})", "$1-$2-$3-$4-$5"));
    assertThat(uuid.version()).isEqualTo(7);
    assertThat(uuid.variant()).isEqualTo(2);
    assertThat(later)
        .as("a later millisecond sorts after")
        .isGreaterThan(first)
        .isGreaterThan(again);
  }

  @Test
  void commandIdVectors() {
    assertThat(StableIds.readyWake("task_9")).isEqualTo("cmd_task_9_ready");
    assertThat(StableIds.routerWake("evt_01a80d48c3eb988ebf7074ef790b8bf0", "task_9"))
        .isEqualTo("cmd_evt_01a80d48c3eb988ebf7074ef790b8bf0_task_9");
    assertThat(StableIds.verify("cand_5f2a")).isEqualTo("cmd_cand_5f2a_verify");
    assertThat(StableIds.releaseId("proj_1", 12)).isEqualTo("rel_proj_1_12");
    assertThat(StableIds.release(StableIds.releaseId("proj_1", 12)))
        .isEqualTo("cmd_rel_proj_1_12_release");
    assertThat(StableIds.commandMessageId(Queue.AGENT_WAKEUPS, "cmd_task_9_ready"))
        .isEqualTo("agent-wakeups:cmd_task_9_ready");
  }

  @Test
  void commandIdsAreValidCommandIdsEvenForLongestInputs() {
    String longTask = "t".repeat(200);

    assertThat(StableIds.routerWake("evt_01a80d48c3eb988ebf7074ef790b8bf0", longTask))
        .matches(IdFormat.COMMAND_ID);
    assertThat(StableIds.release(StableIds.releaseId("p".repeat(200), Check.MAX_SAFE_INTEGER)))
        .matches(IdFormat.COMMAND_ID);
  }

  @Test
  void commandIdsRejectBadInputs() {
    assertThatThrownBy(() -> StableIds.readyWake("bad id")).isInstanceOf(EnvelopeException.class);
    assertThatThrownBy(() -> StableIds.routerWake("evt_nothex", "task_1"))
        .isInstanceOf(EnvelopeException.class);
    assertThatThrownBy(() -> StableIds.releaseId("proj_1", -1))
        .isInstanceOf(EnvelopeException.class);
    assertThatThrownBy(() -> StableIds.commandMessageId(Queue.RELEASE, "rel_1"))
        .isInstanceOf(EnvelopeException.class);
  }
}
