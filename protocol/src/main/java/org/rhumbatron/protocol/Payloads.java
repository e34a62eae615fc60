package org.rhumbatron.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigInteger;
import java.util.Iterator;
import java.util.Map;

/**
 * Copies payloads into the canonical form that a decode of their JSON would produce.
 *
 * <p>Why canonical: an envelope must equal itself after an encode and a decode. Jackson reads
 * {@code 5} as an {@code IntNode}, so a payload built with {@code put("n", 5L)} would not. The copy
 * is also the defensive copy that keeps a record immutable, and the place that rejects what JSON
 * cannot carry (NaN, infinities, unpaired surrogates, binary and POJO nodes) or nests absurdly
 * deep.
 */
final class Payloads {

  /** Deepest nesting below the payload object; Jackson's own parse limit is 1000. */
  static final int MAX_DEPTH = 256;

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final BigInteger MIN_LONG = BigInteger.valueOf(Long.MIN_VALUE);
  private static final BigInteger MAX_LONG = BigInteger.valueOf(Long.MAX_VALUE);

  private Payloads() {}

  static ObjectNode canonicalCopy(String field, ObjectNode payload) {
    Check.required(field, payload);
    return (ObjectNode) copy(field, payload, 0);
  }

  private static JsonNode copy(String pointer, JsonNode node, int depth) {
    if (depth > MAX_DEPTH) {
      throw new EnvelopeException(
          pointer, EnvelopeException.MAX_DEPTH, "payload nests deeper than " + MAX_DEPTH);
    }
    switch (node.getNodeType()) {
      case OBJECT:
        ObjectNode object = NODES.objectNode();
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> e = it.next();
          String child = pointer + "/" + escape(e.getKey());
          Check.wellFormed(child, e.getKey());
          object.set(e.getKey(), copy(child, e.getValue(), depth + 1));
        }
        return object;
      case ARRAY:
        ArrayNode array = NODES.arrayNode(node.size());
        for (int i = 0; i < node.size(); i++) {
          array.add(copy(pointer + "/" + i, node.get(i), depth + 1));
        }
        return array;
      case NUMBER:
        return number(pointer, node);
      case STRING:
        Check.wellFormed(pointer, node.textValue());
        return node; // immutable value node, safe to share
      case BOOLEAN:
      case NULL:
        return node; // immutable value nodes, safe to share
      default:
        throw new EnvelopeException(
            pointer,
            EnvelopeException.TYPE,
            "payload holds a " + node.getNodeType() + " node, which is not a JSON value");
    }
  }

  private static JsonNode number(String pointer, JsonNode node) {
    if (node.isIntegralNumber()) {
      BigInteger value = node.bigIntegerValue();
      if (value.bitLength() < 32) {
        return NODES.numberNode(value.intValue());
      }
      if (value.compareTo(MIN_LONG) >= 0 && value.compareTo(MAX_LONG) <= 0) {
        return NODES.numberNode(value.longValue());
      }
      return NODES.numberNode(value);
    }
    double value = node.doubleValue();
    if (!Double.isFinite(value)) {
      throw new EnvelopeException(
          pointer, EnvelopeException.FINITE, value + " cannot be written as JSON");
    }
    return NODES.numberNode(value);
  }

  /** Escapes a key for a JSON Pointer (RFC 6901): {@code ~} first, then {@code /}. */
  static String escape(String key) {
    return key.replace("~", "~0").replace("/", "~1");
  }
}
