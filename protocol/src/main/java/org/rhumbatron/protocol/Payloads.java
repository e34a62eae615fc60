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

  /**
   * Copies {@code node}, whose JSON Pointer is {@code pointer}. The pointers of its children are
   * made only for a child that has children of its own or fails a check: most of a payload is
   * leaves that pass, and the router copies the payload of every Event it decodes.
   */
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
          String key = e.getKey();
          if (Check.firstUnpairedSurrogate(key) >= 0) {
            Check.wellFormed(pointer + "/" + escape(key), key);
          }
          object.set(key, child(pointer, key, -1, e.getValue(), depth + 1));
        }
        return object;
      case ARRAY:
        ArrayNode array = NODES.arrayNode(node.size());
        for (int i = 0; i < node.size(); i++) {
          array.add(child(pointer, null, i, node.get(i), depth + 1));
        }
        return array;
      default:
        return leaf(pointer, node);
    }
  }

  /** The child at {@code key} (an object's) or {@code index} (an array's) of {@code parent}. */
  private static JsonNode child(String parent, String key, int index, JsonNode node, int depth) {
    if (depth > MAX_DEPTH || node.isContainerNode() || !isPlainLeaf(node)) {
      return copy(
          parent + "/" + (key != null ? escape(key) : Integer.toString(index)), node, depth);
    }
    // Checked already: only a number changes in the copy (a finite one, so no pointer is needed).
    return node.isNumber() ? number(null, node) : node;
  }

  /** A leaf that passes every check as it is: its copy needs no pointer. */
  private static boolean isPlainLeaf(JsonNode node) {
    return switch (node.getNodeType()) {
      case STRING -> Check.firstUnpairedSurrogate(node.textValue()) < 0;
      case NUMBER -> node.isIntegralNumber() || Double.isFinite(node.doubleValue());
      case BOOLEAN, NULL -> true;
      default -> false;
    };
  }

  private static JsonNode leaf(String pointer, JsonNode node) {
    switch (node.getNodeType()) {
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
    if (node.isInt()) {
      return node; // what a decode makes of an integer in int range; immutable
    }
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
