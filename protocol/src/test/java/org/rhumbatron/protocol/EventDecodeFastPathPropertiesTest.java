package org.rhumbatron.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * decodeEvent reads an envelope of the schema's shape without the schema validator. Whatever it
 * accepts, on either path, the schema accepts too: checked on valid Events with one field replaced
 * by a value near the edge of what the schema allows.
 */
class EventDecodeFastPathPropertiesTest {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final EnvelopeCodec CODEC = new EnvelopeCodec();

  private static final List<String> FIELDS = EnvelopeMutationPropertiesTest.EVENT_FIELDS;

  private static final List<JsonNode> VALUES =
      List.of(
          NODES.nullNode(),
          NODES.numberNode(0),
          NODES.numberNode(1),
          NODES.numberNode(1.0),
          NODES.numberNode(-1),
          NODES.numberNode(2_147_483_648L),
          NODES.numberNode(9_007_199_254_740_992L),
          NODES.booleanNode(true),
          NODES.arrayNode(),
          NODES.objectNode(),
          NODES.textNode(""),
          NODES.textNode("abc"),
          NODES.textNode("abc\n"),
          NODES.textNode("has space"),
          NODES.textNode("change.created"),
          NODES.textNode("intent.declared"),
          NODES.textNode("evt_0123456789abcdef0123456789abcdef"),
          NODES.textNode("evt_0123456789abcdef0123456789abcdef\n"),
          NODES.textNode("2026-01-01T00:00:00Z"),
          NODES.textNode("2026-01-01T00:00Z"),
          NODES.textNode("2026-01-01T00:00:00+01:00"),
          NODES.textNode("2026-01-01T00:00:00.1234567891Z"),
          NODES.textNode("2026-02-30T00:00:00Z"),
          NODES.textNode("+12026-01-01T00:00:00Z"),
          NODES.textNode("2016-12-31T23:59:60Z"));

  @Property(tries = 1000)
  void whatDecodeAcceptsTheSchemaAccepts(
      @ForAll("events") Event event,
      @ForAll @IntRange(max = 13) int field,
      @ForAll @IntRange(max = 26) int value,
      @ForAll @IntRange(max = 3) int how) {
    ObjectNode tree = Samples.tree(CODEC.encodeEvent(event));
    String name = FIELDS.get(field);
    switch (how) {
      case 0 -> tree.remove(name);
      case 1 -> tree.put("surplus", "x");
      default -> tree.set(name, VALUES.get(value % VALUES.size()));
    }
    boolean decoded;
    try {
      CODEC.decodeEvent(Samples.bytes(tree));
      decoded = true;
    } catch (EnvelopeException e) {
      decoded = false;
    }
    boolean schemaValid = Schemas.EVENT.validate(tree).isEmpty();
    if (decoded) {
      assertThat(schemaValid).as("schema verdict on %s", tree).isTrue();
    }
  }

  @Property(tries = 200)
  void everyEncodedEventHasTheShapeOfTheFastPath(@ForAll("events") Event event) {
    assertThat(EnvelopeJson.hasEventShape(Samples.tree(CODEC.encodeEvent(event)))).isTrue();
  }

  @Provide
  Arbitrary<Event> events() {
    return EnvelopeArbitraries.events();
  }
}
