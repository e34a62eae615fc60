package org.rhumbatron.protocol;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class EnvelopeCodecTest {

  private final EnvelopeCodec codec = new EnvelopeCodec();

  @ParameterizedTest
  @EnumSource(EventType.class)
  void everyEventTypeRoundTrips(EventType type) {
    Event event = Samples.event(type);

    byte[] json = codec.encodeEvent(event);

    assertThat(codec.decodeEvent(json)).isEqualTo(event);
    assertThat(codec.decodeEvent(new String(json, UTF_8))).isEqualTo(event);
    assertThat(Samples.tree(json).get("eventType").textValue()).isEqualTo(type.wireName());
  }

  @ParameterizedTest
  @EnumSource(CommandType.class)
  void everyCommandTypeRoundTrips(CommandType type) {
    Command command = Samples.command(type);

    byte[] json = codec.encodeCommand(command);

    assertThat(codec.decodeCommand(json)).isEqualTo(command);
    assertThat(Samples.tree(json).get("commandType").textValue()).isEqualTo(type.wireName());
  }

  @Test
  void eventJsonHasTheSeedsFieldsInOrderWithExplicitNulls() {
    Event event =
        Samples.eventBuilder(EventType.PROJECT_CREATED)
            .changeId(null)
            .taskId(null)
            .canonicalGeneration(null)
            .causedBy(null)
            .build();

    ObjectNode tree = Samples.tree(codec.encodeEvent(event));

    assertThat(fieldNames(tree))
        .containsExactly(
            "eventId",
            "eventType",
            "eventVersion",
            "tenantId",
            "projectId",
            "changeId",
            "taskId",
            "actor",
            "resource",
            "canonicalGeneration",
            "causedBy",
            "correlationId",
            "timestamp",
            "payload");
    assertThat(tree.get("changeId").isNull()).isTrue();
    assertThat(tree.get("timestamp").textValue()).isEqualTo("2025-03-04T05:06:07.123456789Z");
  }

  @Test
  void commandJsonHasTheSeedsFieldsInOrder() {
    ObjectNode tree = Samples.tree(codec.encodeCommand(Samples.command(CommandType.AGENT_WAKE)));

    assertThat(fieldNames(tree))
        .containsExactly(
            "commandId",
            "commandType",
            "projectId",
            "changeId",
            "taskId",
            "attempt",
            "createdAt",
            "deadline",
            "payload");
    assertThat(tree.get("deadline").textValue()).isEqualTo("2025-03-04T05:21:07.123456789Z");
  }

  @Test
  void toJsonIsAValidatedCopy() {
    Event event = Samples.event(EventType.TASK_COMPLETED);

    ObjectNode json = codec.toJson(event);
    ((ObjectNode) json.get("payload")).put("count", 99);

    assertThat(codec.decodeEvent(codec.encodeEvent(event)).payload().get("count").intValue())
        .isEqualTo(3);
  }

  @Test
  void deadLetterRoundTripsAndItsOriginalDecodes() {
    Command original = Samples.command(CommandType.CHANGE_SETTLE);
    DeadLetterMessage message = Samples.deadLetter(original, codec);

    DeadLetterMessage decoded = codec.decodeDeadLetter(codec.encodeDeadLetter(message));

    assertThat(decoded).isEqualTo(message);
    assertThat(codec.decodeCommand(decoded.original())).isEqualTo(original);
  }

  @Test
  void deadLetterKeepsAnUndecodableOriginal() {
    DeadLetterMessage message =
        new DeadLetterMessage(Queue.AGENT_WAKEUPS, 4, "not JSON", "\u0000garbage{", Samples.T0);

    assertThat(codec.decodeDeadLetter(codec.encodeDeadLetter(message))).isEqualTo(message);
  }

  @Test
  void notJsonIsRejectedAsAWholeEnvelope() {
    EnvelopeException e = reject("not json at all");

    assertThat(e.field()).isEqualTo(EnvelopeException.WHOLE_ENVELOPE);
    assertThat(e.rule()).isEqualTo(EnvelopeException.JSON);
    assertThat(e.getMessage()).contains("envelope", "json");
  }

  @Test
  void emptyNullAndNonObjectInputsAreRejected() {
    assertThat(reject("").rule()).isEqualTo(EnvelopeException.JSON);
    assertThat(reject("   ").rule()).isEqualTo(EnvelopeException.JSON);
    assertThat(reject("[1,2]").rule()).isEqualTo(EnvelopeException.TYPE);
    assertThat(reject("null").rule()).isEqualTo(EnvelopeException.TYPE);
    EnvelopeException nullBytes =
        catchThrowableOfType(EnvelopeException.class, () -> codec.decodeEvent((byte[]) null));
    assertThat(nullBytes.rule()).isEqualTo(EnvelopeException.REQUIRED);
    EnvelopeException nullEvent =
        catchThrowableOfType(EnvelopeException.class, () -> codec.encodeEvent(null));
    assertThat(nullEvent.field()).isEqualTo(EnvelopeException.WHOLE_ENVELOPE);
  }

  @Test
  void trailingDataAfterTheObjectIsRejected() {
    String json = new String(codec.encodeEvent(Samples.event(EventType.TASK_READY)), UTF_8);

    assertThat(reject(json + "{}").rule()).isEqualTo(EnvelopeException.JSON);
  }

  @Test
  void invalidUtf8IsRejected() {
    byte[] json = codec.encodeEvent(Samples.event(EventType.TASK_READY));
    byte[] broken = new byte[json.length + 3];
    System.arraycopy(json, 0, broken, 0, json.length);
    int at = new String(json, UTF_8).indexOf("work_graph");
    broken[at] = (byte) 0xC3; // a lead byte followed by ASCII is not UTF-8
    System.arraycopy(json, at + 1, broken, at + 1, json.length - at - 1);

    EnvelopeException e =
        catchThrowableOfType(EnvelopeException.class, () -> codec.decodeEvent(broken));

    assertThat(e.rule()).isEqualTo(EnvelopeException.JSON);
  }

  @Test
  void aDuplicateKeyIsRejectedNamingIt() {
    String json = new String(codec.encodeEvent(Samples.event(EventType.TASK_READY)), UTF_8);
    String duplicated = json.replaceFirst("\\{", "{\"eventType\":\"task.failed\",");

    EnvelopeException e = reject(duplicated);

    assertThat(e.field()).isEqualTo("/eventType");
    assertThat(e.rule()).isEqualTo(EnvelopeException.JSON);
  }

  @Test
  void aMissingFieldIsNamed() {
    ObjectNode tree = encoded(EventType.TASK_COMPLETED);
    tree.remove("correlationId");

    EnvelopeException e = reject(tree);

    assertThat(e.field()).isEqualTo("/correlationId");
    assertThat(e.rule()).isEqualTo(EnvelopeException.REQUIRED);
    assertThat(e.getMessage()).contains("/correlationId", "required");
  }

  @Test
  void aWronglyTypedFieldIsNamed() {
    ObjectNode tree = encoded(EventType.TASK_COMPLETED);
    tree.put("eventVersion", "1");

    EnvelopeException e = reject(tree);

    assertThat(e.field()).isEqualTo("/eventVersion");
    assertThat(e.rule()).isEqualTo(EnvelopeException.TYPE);
  }

  @Test
  void anUnknownEventTypeIsNamed() {
    ObjectNode tree = encoded(EventType.TASK_COMPLETED);
    tree.put("eventType", "task.exploded");

    EnvelopeException e = reject(tree);

    assertThat(e.field()).isEqualTo("/eventType");
    assertThat(e.rule()).isEqualTo(EnvelopeException.ENUM);
  }

  @Test
  void anUnknownCommandTypeIsNamed() {
    ObjectNode tree = Samples.tree(codec.encodeCommand(Samples.command(CommandType.AGENT_WAKE)));
    tree.put("commandType", "agent.sleep");

    EnvelopeException e =
        catchThrowableOfType(
            EnvelopeException.class, () -> codec.decodeCommand(Samples.bytes(tree)));

    assertThat(e.field()).isEqualTo("/commandType");
    assertThat(e.rule()).isEqualTo(EnvelopeException.ENUM);
  }

  @Test
  void anExtraFieldIsNamed() {
    ObjectNode tree = encoded(EventType.TASK_COMPLETED);
    tree.put("priority", 5);

    EnvelopeException e = reject(tree);

    assertThat(e.field()).isEqualTo("/priority");
    assertThat(e.rule()).isEqualTo(EnvelopeException.ADDITIONAL_PROPERTIES);
  }

  @Test
  void badIdsAndTimestampsAreNamed() {
    assertThat(rejectWith("eventId", "evt_XYZ").field()).isEqualTo("/eventId");
    assertThat(rejectWith("projectId", "").field()).isEqualTo("/projectId");
    assertThat(rejectWith("projectId", "proj_1\n").field()).isEqualTo("/projectId");
    assertThat(rejectWith("timestamp", "2025-03-04T05:06:07+02:00").field())
        .isEqualTo("/timestamp");
    assertThat(rejectWith("timestamp", "2025-02-30T05:06:07Z").field()).isEqualTo("/timestamp");
    assertThat(rejectWith("timestamp", "yesterday").field()).isEqualTo("/timestamp");
  }

  @Test
  void numbersOutOfRangeAreNamed() {
    ObjectNode tree = encoded(EventType.CANONICAL_ADVANCED);
    tree.put("canonicalGeneration", -1);
    assertThat(reject(tree).field()).isEqualTo("/canonicalGeneration");

    ObjectNode command = Samples.tree(codec.encodeCommand(Samples.command(CommandType.AGENT_WAKE)));
    command.put("attempt", 0);
    EnvelopeException e =
        catchThrowableOfType(
            EnvelopeException.class, () -> codec.decodeCommand(Samples.bytes(command)));
    assertThat(e.field()).isEqualTo("/attempt");
    assertThat(e.rule()).isEqualTo(EnvelopeException.MINIMUM);
  }

  @Test
  void aResourceEventWithoutResourceIsRejected() {
    ObjectNode tree = encoded(EventType.CLAIM_EXPIRED);
    tree.putNull("resource");

    assertThat(reject(tree).field()).isEqualTo("/resource");
  }

  @Test
  void onlyForksSweepMayOmitTheProjectAndCappedCommandsNameTheirChange() {
    Command sweep =
        Samples.commandBuilder(CommandType.FORKS_SWEEP).projectId(null).changeId(null).build();
    assertThat(codec.decodeCommand(codec.encodeCommand(sweep))).isEqualTo(sweep);

    ObjectNode noProject =
        Samples.tree(codec.encodeCommand(Samples.command(CommandType.INDEX_BUILD)));
    noProject.putNull("projectId");
    ObjectNode noChange =
        Samples.tree(codec.encodeCommand(Samples.command(CommandType.AGENT_WAKE)));
    noChange.putNull("changeId");

    assertThat(
            catchThrowableOfType(
                    EnvelopeException.class, () -> codec.decodeCommand(Samples.bytes(noProject)))
                .field())
        .isEqualTo("/projectId");
    assertThat(
            catchThrowableOfType(
                    EnvelopeException.class, () -> codec.decodeCommand(Samples.bytes(noChange)))
                .field())
        .isEqualTo("/changeId");
  }

  @Test
  void aDeadlineBeforeCreatedAtIsRejectedOnDecode() {
    ObjectNode tree = Samples.tree(codec.encodeCommand(Samples.command(CommandType.AGENT_WAKE)));
    tree.put("deadline", "2020-01-01T00:00:00Z");

    EnvelopeException e =
        catchThrowableOfType(
            EnvelopeException.class, () -> codec.decodeCommand(Samples.bytes(tree)));

    assertThat(e.field()).isEqualTo("/deadline");
    assertThat(e.rule()).isEqualTo(EnvelopeException.ORDER);
  }

  @Test
  void anOversizedPayloadIsRejectedOnDecodeAndOnEncode() {
    EnvelopeCodec small = new EnvelopeCodec(1024);
    ObjectNode payload = JsonNodeFactory.instance.objectNode().put("blob", "x".repeat(2000));
    Event big = Samples.eventBuilder(EventType.TASK_COMPLETED).payload(payload).build();

    EnvelopeException onEncode =
        catchThrowableOfType(EnvelopeException.class, () -> small.encodeEvent(big));
    EnvelopeException onDecode =
        catchThrowableOfType(
            EnvelopeException.class, () -> small.decodeEvent(codec.encodeEvent(big)));

    assertThat(onEncode.field()).isEqualTo("/payload");
    assertThat(onEncode.rule()).isEqualTo(EnvelopeException.MAX_BYTES);
    assertThat(onDecode.field()).isEqualTo("/payload");
    assertThat(onDecode.getMessage()).contains("1024");
  }

  @Test
  void aPayloadWhoseNumbersWriteLongerThanTheyReadIsMeasuredAsWritten() {
    // 1e6 reads as 3 bytes and writes as 1000000.0: the limit applies to the written payload.
    String numbers = String.join(",", java.util.Collections.nCopies(200, "1e6"));
    ObjectNode marked = JsonNodeFactory.instance.objectNode().put("n", "MARK");
    Event small = Samples.eventBuilder(EventType.TASK_COMPLETED).payload(marked).build();
    String json =
        new String(codec.encodeEvent(small), UTF_8).replace("\"MARK\"", "[" + numbers + "]");
    int written = "{\"n\":[]}".length() + 200 * "1000000.0".length() + 199;
    assertThat(json.length()).isLessThan(written);

    EnvelopeCodec fits = new EnvelopeCodec(written);
    EnvelopeCodec tooSmall = new EnvelopeCodec(written - 1);

    assertThat(fits.decodeEvent(json).payload().get("n").size()).isEqualTo(200);
    EnvelopeException e =
        catchThrowableOfType(EnvelopeException.class, () -> tooSmall.decodeEvent(json));
    assertThat(e.field()).isEqualTo("/payload");
    assertThat(e.rule()).isEqualTo(EnvelopeException.MAX_BYTES);
  }

  @Test
  void theDefaultPayloadLimitIs256KiB() {
    assertThat(codec.maxPayloadBytes()).isEqualTo(256 * 1024);
    int overhead = "{\"blob\":\"\"}".length();
    Event atLimit = withBlob(256 * 1024 - overhead);
    Event overLimit = withBlob(256 * 1024 - overhead + 1);

    assertThat(codec.decodeEvent(codec.encodeEvent(atLimit))).isEqualTo(atLimit);
    assertThatThrownBy(() -> codec.encodeEvent(overLimit))
        .isInstanceOf(EnvelopeException.class)
        .hasMessageContaining("/payload");
  }

  @Test
  void inputFarBeyondTheLimitIsRejectedBeforeParsing() {
    byte[] huge =
        new byte
            [EnvelopeCodec.DEFAULT_MAX_PAYLOAD_BYTES + EnvelopeCodec.ENVELOPE_OVERHEAD_BYTES + 1];

    EnvelopeException e =
        catchThrowableOfType(EnvelopeException.class, () -> codec.decodeEvent(huge));

    assertThat(e.field()).isEqualTo(EnvelopeException.WHOLE_ENVELOPE);
    assertThat(e.rule()).isEqualTo(EnvelopeException.MAX_BYTES);
  }

  @Test
  void aPayloadNumberTooLargeForADoubleIsRejected() {
    String json = new String(codec.encodeEvent(Samples.event(EventType.TASK_READY)), UTF_8);

    EnvelopeException e = reject(json.replace("\"ratio\":0.5", "\"ratio\":1e400"));

    assertThat(e.field()).isEqualTo("/payload/ratio");
    assertThat(e.rule()).isEqualTo(EnvelopeException.FINITE);
  }

  @Test
  void anEscapedLoneSurrogateInThePayloadIsRejected() {
    String json = new String(codec.encodeEvent(Samples.event(EventType.TASK_READY)), UTF_8);

    EnvelopeException e = reject(json.replace("work_graph_completed", "\\ud800"));

    assertThat(e.field()).isEqualTo("/payload/reason");
    assertThat(e.rule()).isEqualTo(EnvelopeException.UNICODE);
  }

  @Test
  void deeplyNestedInputIsRejected() {
    String json = new String(codec.encodeEvent(Samples.event(EventType.TASK_READY)), UTF_8);
    String deep = "[".repeat(5000) + "]".repeat(5000);

    EnvelopeException e = reject(json.replace("\"none\":null", "\"none\":" + deep));

    assertThat(e.field()).isNotEmpty();
  }

  @Test
  void aSmallerLimitThanAnEmptyObjectIsAProgrammingError() {
    assertThatThrownBy(() -> new EnvelopeCodec(1)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void oneCodecServesManyThreads() throws Exception {
    List<Event> events = new ArrayList<>();
    for (EventType type : EventType.values()) {
      events.add(Samples.event(type));
    }
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Boolean>> results = new ArrayList<>();
      for (int i = 0; i < 16; i++) {
        results.add(
            pool.submit(
                () ->
                    events.stream()
                        .allMatch(e -> codec.decodeEvent(codec.encodeEvent(e)).equals(e))));
      }
      for (Future<Boolean> result : results) {
        assertThat(result.get(30, TimeUnit.SECONDS)).isTrue();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private Event withBlob(int length) {
    ObjectNode payload = JsonNodeFactory.instance.objectNode().put("blob", "x".repeat(length));
    return Samples.eventBuilder(EventType.TASK_COMPLETED).payload(payload).build();
  }

  private ObjectNode encoded(EventType type) {
    return Samples.tree(codec.encodeEvent(Samples.event(type)));
  }

  private EnvelopeException rejectWith(String field, String value) {
    ObjectNode tree = encoded(EventType.TASK_COMPLETED);
    tree.put(field, value);
    return reject(tree);
  }

  private EnvelopeException reject(ObjectNode tree) {
    return reject(new String(Samples.bytes(tree), UTF_8));
  }

  private EnvelopeException reject(String json) {
    EnvelopeException e =
        catchThrowableOfType(EnvelopeException.class, () -> codec.decodeEvent(json));
    assertThat(e)
        .as("decoding %s", json.length() > 200 ? json.substring(0, 200) : json)
        .isNotNull();
    assertThat(e.getMessage()).contains(e.field(), e.rule());
    return e;
  }

  private static List<String> fieldNames(ObjectNode tree) {
    List<String> names = new ArrayList<>();
    for (Iterator<String> it = tree.fieldNames(); it.hasNext(); ) {
      names.add(it.next());
    }
    return names;
  }
}
