package org.rhumbatron.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Builders;
import net.jqwik.api.Combinators;

/** jqwik generators of valid envelopes: every value they make must encode and decode. */
final class EnvelopeArbitraries {

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final String ID_TAIL =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-";

  private EnvelopeArbitraries() {}

  static Arbitrary<String> ids(String prefix) {
    return Arbitraries.strings()
        .withChars(ID_TAIL)
        .ofMinLength(1)
        .ofMaxLength(24)
        .map(prefix::concat);
  }

  static Arbitrary<String> eventIds() {
    return Arbitraries.strings().withChars("0123456789abcdef").ofLength(32).map("evt_"::concat);
  }

  static Arbitrary<String> commandIds() {
    return ids("cmd_");
  }

  /** Instants from 1900 to 2100 with any nanosecond, so the fraction takes 0, 3, 6 or 9 digits. */
  static Arbitrary<Instant> instants() {
    return Combinators.combine(
            Arbitraries.longs().between(-2_208_988_800L, 4_102_444_800L),
            Arbitraries.oneOf(
                Arbitraries.just(0),
                Arbitraries.integers().between(0, 999).map(ms -> ms * 1_000_000),
                Arbitraries.integers().between(0, 999_999_999)))
        .as(Instant::ofEpochSecond);
  }

  /** Printable text including spaces and non-ASCII letters, as resource keys may hold. */
  static Arbitrary<String> texts(int maxLength) {
    return Arbitraries.strings()
        .withCharRange(' ', '~')
        .withChars("éüßΩж中文✓")
        .ofMaxLength(maxLength);
  }

  static Arbitrary<String> resources() {
    return texts(40).map("path:"::concat);
  }

  static Arbitrary<ObjectNode> payloads() {
    Arbitrary<JsonNode> leaves =
        Arbitraries.oneOf(
            texts(20).map(NODES::textNode),
            Arbitraries.strings()
                .ofMaxLength(8)
                .filter(s -> Check.replaceUnpairedSurrogates(s).equals(s))
                .map(NODES::textNode),
            Arbitraries.integers().map(NODES::numberNode),
            Arbitraries.longs().map(NODES::numberNode),
            Arbitraries.doubles().map(NODES::numberNode),
            Arbitraries.of(true, false).map(NODES::booleanNode),
            Arbitraries.just(NODES.nullNode()));
    Arbitrary<JsonNode> arrays =
        leaves.list().ofMaxSize(4).map(list -> NODES.arrayNode().addAll(list));
    Arbitrary<JsonNode> objects =
        Arbitraries.maps(texts(8), leaves).ofMaxSize(4).map(EnvelopeArbitraries::object);
    return Arbitraries.maps(texts(12), Arbitraries.oneOf(leaves, arrays, objects))
        .ofMaxSize(6)
        .map(EnvelopeArbitraries::object);
  }

  // Built once: a flatMap would build the whole generator chain again for every value, which made
  // generation the slowest part of the suite.
  private static final Arbitrary<Event> EVENTS =
      Arbitraries.oneOf(
          Arrays.stream(EventType.values()).map(EnvelopeArbitraries::events).toList());

  private static final Arbitrary<Command> COMMANDS =
      Arbitraries.oneOf(
          Arrays.stream(CommandType.values()).map(EnvelopeArbitraries::commands).toList());

  static Arbitrary<Event> events() {
    return EVENTS;
  }

  static Arbitrary<Event> events(EventType type) {
    Arbitrary<String> resources =
        type.kind() == EventType.Kind.RESOURCE ? resources() : resources().injectNull(0.5);
    return Builders.withBuilder(() -> Event.builder().eventType(type))
        .use(eventIds())
        .in(Event.Builder::eventId)
        .use(Arbitraries.integers().between(1, 3))
        .in(Event.Builder::eventVersion)
        .use(ids("tenant_"))
        .in(Event.Builder::tenantId)
        .use(ids("proj_"))
        .in(Event.Builder::projectId)
        .use(ids("chg_").injectNull(0.3))
        .in(Event.Builder::changeId)
        .use(ids("task_").injectNull(0.3))
        .in(Event.Builder::taskId)
        .use(ids("shard:"))
        .in(Event.Builder::actor)
        .use(resources)
        .in(Event.Builder::resource)
        .use(Arbitraries.longs().between(0, Check.MAX_SAFE_INTEGER).injectNull(0.3))
        .in(Event.Builder::canonicalGeneration)
        .use(Arbitraries.oneOf(eventIds(), commandIds()).injectNull(0.3))
        .in(Event.Builder::causedBy)
        .use(Arbitraries.oneOf(eventIds(), ids("chg_")))
        .in(Event.Builder::correlationId)
        .use(instants())
        .in(Event.Builder::timestamp)
        .use(payloads())
        .in(Event.Builder::payload)
        .build(Event.Builder::build);
  }

  static Arbitrary<Command> commands() {
    return COMMANDS;
  }

  static Arbitrary<Command> commands(CommandType type) {
    Arbitrary<String> projects =
        type.requiresProject() ? ids("proj_") : ids("proj_").injectNull(0.5);
    Arbitrary<String> changes =
        type.countsTowardChangeCap() ? ids("chg_") : ids("chg_").injectNull(0.5);
    // deadline depends on createdAt, so both come from one generated pair
    Arbitrary<Times> times =
        Combinators.combine(instants(), Arbitraries.longs().between(0, 86_400_000).injectNull(0.4))
            .as(
                (createdAt, millis) ->
                    new Times(createdAt, millis == null ? null : createdAt.plusMillis(millis)));
    return Builders.withBuilder(() -> Command.builder().commandType(type))
        .use(commandIds())
        .in(Command.Builder::commandId)
        .use(projects)
        .in(Command.Builder::projectId)
        .use(changes)
        .in(Command.Builder::changeId)
        .use(ids("task_").injectNull(0.4))
        .in(Command.Builder::taskId)
        .use(Arbitraries.integers().between(1, Integer.MAX_VALUE))
        .in(Command.Builder::attempt)
        .use(times)
        .in((builder, t) -> builder.createdAt(t.createdAt()).deadline(t.deadline()))
        .use(payloads())
        .in(Command.Builder::payload)
        .build(Command.Builder::build);
  }

  static Arbitrary<DeadLetterMessage> deadLetters() {
    return Combinators.combine(
            Arbitraries.of(
                Queue.AGENT_WAKEUPS, Queue.INTEGRATION, Queue.VERIFICATION, Queue.RELEASE),
            Arbitraries.integers().between(1, 10),
            texts(200),
            texts(500),
            instants())
        .as(DeadLetterMessage::new);
  }

  private record Times(Instant createdAt, Instant deadline) {}

  private static ObjectNode object(Map<String, JsonNode> fields) {
    ObjectNode object = NODES.objectNode();
    fields.forEach(object::set);
    return object;
  }
}
