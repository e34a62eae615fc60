package org.rhumbatron.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * Random damage to valid envelopes is always rejected with an {@link EnvelopeException} that names
 * the damaged field in {@code field()} and in its message; never with any other exception.
 */
class EnvelopeMutationPropertiesTest {

  /** Small, so that an oversized payload still fits the envelope limit and is named as such. */
  private static final int MAX_PAYLOAD = 1024;

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final EnvelopeCodec CODEC = new EnvelopeCodec(MAX_PAYLOAD);

  /** A valid envelope as a tree, with what is needed to break and decode it. */
  record Sample(String kind, ObjectNode tree, Function<byte[], Object> decoder) {
    List<String> fields() {
      return kind.equals("event") ? EVENT_FIELDS : COMMAND_FIELDS;
    }

    String typeField() {
      return kind.equals("event") ? "eventType" : "commandType";
    }

    byte[] bytes() {
      return Samples.bytes(tree);
    }
  }

  static final List<String> EVENT_FIELDS =
      Arrays.stream(Event.class.getRecordComponents()).map(c -> c.getName()).toList();
  static final List<String> COMMAND_FIELDS =
      Arrays.stream(Command.class.getRecordComponents()).map(c -> c.getName()).toList();

  // Values of the wrong JSON type (or shape) for each kind of field. Nullable fields never get
  // null.
  private static final List<JsonNode> NOT_TEXT =
      List.of(NODES.numberNode(42), NODES.booleanNode(true), NODES.arrayNode(), NODES.objectNode());
  private static final List<JsonNode> NOT_ID =
      List.of(NODES.textNode(""), NODES.textNode("has space"), NODES.textNode("ü"));
  private static final List<JsonNode> NOT_INTEGER =
      List.of(
          NODES.textNode("1"),
          NODES.numberNode(1.5),
          NODES.booleanNode(false),
          NODES.arrayNode(),
          NODES.numberNode(-1));
  private static final List<JsonNode> NOT_TIMESTAMP =
      List.of(
          NODES.numberNode(1_700_000_000),
          NODES.textNode("2025-01-01 00:00:00"),
          NODES.textNode("2025-01-01T00:00:00+01:00"),
          NODES.textNode("2025-13-01T00:00:00Z"));
  private static final List<JsonNode> NOT_OBJECT =
      List.of(NODES.textNode("{}"), NODES.arrayNode(), NODES.numberNode(0), NODES.nullNode());
  private static final List<String> NULLABLE =
      List.of(
          "changeId",
          "taskId",
          "resource",
          "canonicalGeneration",
          "causedBy",
          "deadline",
          "projectId");

  @Property(tries = 150)
  void droppingAFieldIsNamed(
      @ForAll("samples") Sample sample, @ForAll @IntRange(max = 1000) int pick) {
    String field = pick(sample.fields(), pick);
    sample.tree().remove(field);

    EnvelopeException e = rejected(sample, sample.bytes());

    assertThat(e.field()).isEqualTo("/" + field);
    assertThat(e.rule()).isEqualTo(EnvelopeException.REQUIRED);
  }

  @Property(tries = 200)
  void aWronglyTypedFieldIsNamed(
      @ForAll("samples") Sample sample,
      @ForAll @IntRange(max = 1000) int pick,
      @ForAll @IntRange(max = 1000) int value) {
    String field = pick(sample.fields(), pick);
    sample.tree().set(field, pick(wrongValues(field), value));

    EnvelopeException e = rejected(sample, sample.bytes());

    assertThat(e.field()).isEqualTo("/" + field);
  }

  @Property(tries = 100)
  void anUnknownTypeNameIsNamed(
      @ForAll("samples") Sample sample, @ForAll("typeNames") String name) {
    sample.tree().put(sample.typeField(), name);

    EnvelopeException e = rejected(sample, sample.bytes());

    assertThat(e.field()).isEqualTo("/" + sample.typeField());
    assertThat(e.rule()).isEqualTo(EnvelopeException.ENUM);
  }

  @Property(tries = 100)
  void anExtraFieldIsNamed(@ForAll("samples") Sample sample, @ForAll("extraNames") String name) {
    sample.tree().put(name, "surplus");

    EnvelopeException e = rejected(sample, sample.bytes());

    assertThat(e.field()).isEqualTo("/" + Payloads.escape(name));
    assertThat(e.rule()).isEqualTo(EnvelopeException.ADDITIONAL_PROPERTIES);
  }

  @Property(tries = 50)
  void anOversizedPayloadIsNamed(
      @ForAll("samples") Sample sample,
      @ForAll @IntRange(min = MAX_PAYLOAD, max = 50_000) int size) {
    sample.tree().set("payload", NODES.objectNode().put("blob", "x".repeat(size)));

    EnvelopeException e = rejected(sample, sample.bytes());

    assertThat(e.field()).isEqualTo("/payload");
    assertThat(e.rule()).isEqualTo(EnvelopeException.MAX_BYTES);
  }

  @Property(tries = 150)
  void truncationIsRejected(
      @ForAll("samples") Sample sample, @ForAll @IntRange(max = 100_000) int cut) {
    byte[] bytes = sample.bytes();

    EnvelopeException e = rejected(sample, Arrays.copyOf(bytes, cut % bytes.length));

    assertThat(e.field()).isEqualTo(EnvelopeException.WHOLE_ENVELOPE);
    assertThat(e.rule()).isEqualTo(EnvelopeException.JSON);
  }

  @Property(tries = 300)
  void garbageIsRejected(@ForAll boolean asEvent, @ForAll @Size(max = 300) byte[] garbage) {
    Function<byte[], Object> decoder = asEvent ? CODEC::decodeEvent : CODEC::decodeCommand;

    assertNamesItsField(catchThrowable(() -> decoder.apply(garbage)));
  }

  /**
   * A flipped byte may still give a valid envelope; what it must never give is another exception.
   */
  @Property(tries = 200)
  void aFlippedByteDecodesOrIsRejected(
      @ForAll("samples") Sample sample,
      @ForAll @IntRange(max = 100_000) int at,
      @ForAll byte value) {
    byte[] bytes = sample.bytes();
    bytes[at % bytes.length] = value;

    Throwable thrown = catchThrowable(() -> sample.decoder().apply(bytes));

    if (thrown != null) {
      assertNamesItsField(thrown);
    }
  }

  @Provide
  Arbitrary<Sample> samples() {
    return Arbitraries.oneOf(
        EnvelopeArbitraries.events()
            .map(e -> new Sample("event", Samples.tree(CODEC.encodeEvent(e)), CODEC::decodeEvent)),
        EnvelopeArbitraries.commands()
            .map(
                c ->
                    new Sample(
                        "command", Samples.tree(CODEC.encodeCommand(c)), CODEC::decodeCommand)));
  }

  @Provide
  Arbitrary<String> typeNames() {
    List<String> known =
        java.util.stream.Stream.concat(
                Arrays.stream(EventType.values()).map(EventType::wireName),
                Arrays.stream(CommandType.values()).map(CommandType::wireName))
            .toList();
    return Arbitraries.oneOf(
            Arbitraries.strings().ofMaxLength(30),
            Arbitraries.of(known).map(String::toUpperCase),
            Arbitraries.of(known).map(n -> n + "d"),
            Arbitraries.of(known).map(n -> n.replace('.', '_')))
        .filter(n -> !known.contains(n));
  }

  @Provide
  Arbitrary<String> extraNames() {
    return Arbitraries.strings()
        .withCharRange('a', 'z')
        .withChars("~/_ é")
        .ofMinLength(1)
        .ofMaxLength(20)
        .filter(n -> !EVENT_FIELDS.contains(n) && !COMMAND_FIELDS.contains(n));
  }

  static List<JsonNode> wrongValues(String field) {
    Map<String, List<JsonNode>> byField =
        Map.of(
            "eventVersion", NOT_INTEGER,
            "attempt", NOT_INTEGER,
            "canonicalGeneration", NOT_INTEGER,
            "timestamp", NOT_TIMESTAMP,
            "createdAt", NOT_TIMESTAMP,
            "deadline", NOT_TIMESTAMP,
            "payload", NOT_OBJECT);
    List<JsonNode> values = byField.get(field);
    if (values == null) {
      values = new java.util.ArrayList<>(NOT_TEXT);
      if (!field.equals("resource")) {
        values.addAll(NOT_ID); // resource keys may hold spaces and letters beyond ASCII
      }
    }
    if (!NULLABLE.contains(field) && !values.contains(NODES.nullNode())) {
      values = new java.util.ArrayList<>(values);
      values.add(NODES.nullNode());
    }
    return values;
  }

  private static <T> T pick(List<T> list, int pick) {
    return list.get(pick % list.size());
  }

  private static EnvelopeException rejected(Sample sample, byte[] bytes) {
    Throwable thrown = catchThrowable(() -> sample.decoder().apply(bytes));
    assertNamesItsField(thrown);
    return (EnvelopeException) thrown;
  }

  static void assertNamesItsField(Throwable thrown) {
    assertThat(thrown).isInstanceOf(EnvelopeException.class);
    EnvelopeException e = (EnvelopeException) thrown;
    assertThat(e.field()).isNotEmpty();
    assertThat(e.rule()).isNotEmpty();
    assertThat(e.getMessage()).contains(e.field()).contains(e.rule());
  }
}
