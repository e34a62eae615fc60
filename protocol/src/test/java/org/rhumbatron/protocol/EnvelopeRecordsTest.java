package org.rhumbatron.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.node.BinaryNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The records' constructors: the checks, the defaults, and the defensive payload copies. */
class EnvelopeRecordsTest {

  @Test
  void builderDefaultsToTheCurrentVersionAndAnEmptyPayload() {
    Event event =
        Samples.eventBuilder(EventType.TASK_READY)
            .payload(JsonNodeFactory.instance.objectNode())
            .build();
    Command command = Samples.commandBuilder(CommandType.AGENT_WAKE).build();

    assertThat(event.eventVersion()).isEqualTo(Event.CURRENT_VERSION);
    assertThat(event.payload().isEmpty()).isTrue();
    assertThat(command.attempt()).isEqualTo(1);
  }

  @Test
  void payloadIsCopiedInAndOut() {
    ObjectNode payload = Samples.payload();
    Event event = Samples.eventBuilder(EventType.TASK_READY).payload(payload).build();

    payload.put("count", 99);
    event.payload().put("count", 100);

    assertThat(event.payload().get("count").intValue()).isEqualTo(3);
  }

  @Test
  void payloadNumbersAreCanonicalSoEqualityIgnoresHowTheyWereBuilt() {
    ObjectNode asLong =
        JsonNodeFactory.instance.objectNode().put("n", 5L).put("d", new BigDecimal("1.5"));
    ObjectNode asInt = JsonNodeFactory.instance.objectNode().put("n", 5).put("d", 1.5);

    assertThat(Samples.eventBuilder(EventType.TASK_READY).payload(asLong).build())
        .isEqualTo(Samples.eventBuilder(EventType.TASK_READY).payload(asInt).build());
  }

  @Test
  void payloadRejectsWhatJsonCannotCarry() {
    assertPayloadRejected(
        JsonNodeFactory.instance.objectNode().put("x", Double.NaN),
        "/payload/x",
        EnvelopeException.FINITE);
    assertPayloadRejected(
        JsonNodeFactory.instance.objectNode().set("a/b", BinaryNode.valueOf(new byte[] {1})),
        "/payload/a~1b",
        EnvelopeException.TYPE);
    assertPayloadRejected(
        JsonNodeFactory.instance.objectNode().put("s", "\uD800"),
        "/payload/s",
        EnvelopeException.UNICODE);
    ObjectNode deep = JsonNodeFactory.instance.objectNode();
    ObjectNode cursor = deep;
    for (int i = 0; i < Payloads.MAX_DEPTH + 2; i++) {
      cursor = cursor.putObject("d");
    }
    EnvelopeException e =
        catchThrowableOfType(
            EnvelopeException.class,
            () -> Samples.eventBuilder(EventType.TASK_READY).payload(deep).build());
    assertThat(e.rule()).isEqualTo(EnvelopeException.MAX_DEPTH);
  }

  @Test
  void requiredFieldsAreNamedWhenMissing() {
    assertRejected(
        () -> Samples.eventBuilder(EventType.TASK_READY).eventId(null).build(),
        "/eventId",
        EnvelopeException.REQUIRED);
    assertRejected(
        () -> Samples.eventBuilder(EventType.TASK_READY).eventType(null).build(),
        "/eventType",
        EnvelopeException.REQUIRED);
    assertRejected(
        () -> Samples.eventBuilder(EventType.TASK_READY).timestamp(null).build(),
        "/timestamp",
        EnvelopeException.REQUIRED);
    assertRejected(
        () -> Samples.eventBuilder(EventType.TASK_READY).payload(null).build(),
        "/payload",
        EnvelopeException.REQUIRED);
    assertRejected(
        () -> Samples.eventBuilder(EventType.INTENT_DECLARED).resource(null).build(),
        "/resource",
        EnvelopeException.REQUIRED);
    assertRejected(
        () -> Samples.commandBuilder(CommandType.APP_REMOVE).projectId(null).build(),
        "/projectId",
        EnvelopeException.REQUIRED);
    assertRejected(
        () -> Samples.commandBuilder(CommandType.CHANGE_SETTLE).changeId(null).build(),
        "/changeId",
        EnvelopeException.REQUIRED);
  }

  @Test
  void valuesAreChecked() {
    assertRejected(
        () -> Samples.eventBuilder(EventType.TASK_READY).eventVersion(0).build(),
        "/eventVersion",
        EnvelopeException.MINIMUM);
    assertRejected(
        () -> Samples.eventBuilder(EventType.TASK_READY).canonicalGeneration(-1L).build(),
        "/canonicalGeneration",
        EnvelopeException.MINIMUM);
    assertRejected(
        () -> Samples.eventBuilder(EventType.TASK_READY).projectId("proj 1").build(),
        "/projectId",
        EnvelopeException.PATTERN);
    assertRejected(
        () -> Samples.eventBuilder(EventType.TASK_READY).resource("path:\n").build(),
        "/resource",
        EnvelopeException.PATTERN);
    assertRejected(
        () ->
            Samples.eventBuilder(EventType.TASK_READY)
                .timestamp(Instant.parse("+10000-01-01T00:00:00Z"))
                .build(),
        "/timestamp",
        EnvelopeException.RANGE);
    assertRejected(
        () -> Samples.commandBuilder(CommandType.AGENT_WAKE).attempt(0).build(),
        "/attempt",
        EnvelopeException.MINIMUM);
    assertRejected(
        () -> Samples.commandBuilder(CommandType.AGENT_WAKE).commandId("task_1").build(),
        "/commandId",
        EnvelopeException.PATTERN);
    assertRejected(
        () ->
            Samples.commandBuilder(CommandType.AGENT_WAKE)
                .deadline(Samples.T0.minusMillis(1))
                .build(),
        "/deadline",
        EnvelopeException.ORDER);
  }

  @Test
  void withAttemptKeepsEverythingElse() {
    Command first = Samples.command(CommandType.CHANGE_DISPATCH);

    Command retry = first.withAttempt(first.attempt() + 1);

    assertThat(retry.attempt()).isEqualTo(2);
    assertThat(retry.withAttempt(1)).isEqualTo(first);
  }

  @Test
  void deadLetterCutsLongErrorsAndRefusesQueuesWithoutOne() {
    String longError = "x".repeat(DeadLetterMessage.MAX_ERROR_CHARS - 1) + "\uD83D\uDE00tail";
    DeadLetterMessage message =
        new DeadLetterMessage(Queue.RELEASE, 4, longError, "{}", Samples.T0);

    assertThat(message.error()).hasSize(DeadLetterMessage.MAX_ERROR_CHARS - 1);
    assertRejected(
        () -> new DeadLetterMessage(Queue.INDEXING, 4, "e", "{}", Samples.T0),
        "/originQueue",
        EnvelopeException.ENUM);
    assertRejected(
        () -> new DeadLetterMessage(Queue.RELEASE, 0, "e", "{}", Samples.T0),
        "/deliveryCount",
        EnvelopeException.MINIMUM);
  }

  @Test
  void exceptionsAreUncheckedRhumbatronExceptionsThatNameFieldAndRule() {
    EnvelopeException e = new EnvelopeException(null, null, "detail");

    assertThat(e).isInstanceOf(RhumbatronException.class).isInstanceOf(RuntimeException.class);
    assertThat(e.field()).isEqualTo(EnvelopeException.WHOLE_ENVELOPE);
    assertThat(e.rule()).isNotEmpty();
    assertThat(e.getMessage()).isEqualTo("envelope violates rule 'unknown': detail");
  }

  private static void assertPayloadRejected(ObjectNode payload, String field, String rule) {
    assertRejected(
        () -> Samples.eventBuilder(EventType.TASK_READY).payload(payload).build(), field, rule);
  }

  private static void assertRejected(Runnable build, String field, String rule) {
    EnvelopeException e = catchThrowableOfType(EnvelopeException.class, build::run);
    assertThat(e).as(field).isNotNull();
    assertThat(e.field()).isEqualTo(field);
    assertThat(e.rule()).isEqualTo(rule);
    assertThat(e.getMessage()).contains(field, rule);
  }
}
