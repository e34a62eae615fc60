package org.rhumbatron.protocol;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;

/** Valid envelopes of every type, for example-based tests. */
final class Samples {

  static final ObjectMapper MAPPER = new ObjectMapper();
  static final Instant T0 = Instant.parse("2025-03-04T05:06:07.123456789Z");

  private Samples() {}

  static ObjectNode payload() {
    ObjectNode payload = JsonNodeFactory.instance.objectNode();
    payload.put("reason", "work_graph_completed");
    payload.put("count", 3);
    payload.put("big", 5_000_000_000L);
    payload.put("ratio", 0.5);
    payload.put("ok", true);
    payload.putNull("none");
    payload.putArray("items").add(1).add("two").addObject().put("three", "drei ✓");
    return payload;
  }

  static Event.Builder eventBuilder(EventType type) {
    return Event.builder()
        .eventId(StableIds.stableEventId("chg_1", type, "task_1"))
        .eventType(type)
        .tenantId("tenant_1")
        .projectId("proj_1")
        .changeId("chg_1")
        .taskId("task_1")
        .actor("resource-shard:proj_1:3")
        .resource(type.kind() == EventType.Kind.RESOURCE ? "path:src/api/" : null)
        .canonicalGeneration(7L)
        .causedBy("evt_00000000000000000000000000000001")
        .correlationId("chg_1")
        .timestamp(T0)
        .payload(payload());
  }

  static Event event(EventType type) {
    return eventBuilder(type).build();
  }

  static Command.Builder commandBuilder(CommandType type) {
    return Command.builder()
        .commandId(StableIds.readyWake("task_1"))
        .commandType(type)
        .projectId(type.requiresProject() ? "proj_1" : null)
        .changeId("chg_1")
        .taskId("task_1")
        .attempt(1)
        .createdAt(T0)
        .deadline(T0.plusSeconds(900))
        .payload(payload());
  }

  static Command command(CommandType type) {
    return commandBuilder(type).build();
  }

  static DeadLetterMessage deadLetter(Command original, EnvelopeCodec codec) {
    return new DeadLetterMessage(
        original.commandType().queue().hasDeadLetterQueue()
            ? original.commandType().queue()
            : Queue.INTEGRATION,
        4,
        "java.lang.IllegalStateException: boom\n\tat Handler.handle(Handler.java:42)",
        new String(codec.encodeCommand(original), java.nio.charset.StandardCharsets.UTF_8),
        T0.plusSeconds(120));
  }

  /** The encoded envelope as a mutable tree, for tests that break it on purpose. */
  static ObjectNode tree(byte[] json) {
    try {
      return (ObjectNode) MAPPER.readTree(json);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  static byte[] bytes(ObjectNode tree) {
    try {
      return MAPPER.writeValueAsBytes(tree);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
