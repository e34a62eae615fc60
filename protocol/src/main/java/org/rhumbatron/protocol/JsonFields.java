package org.rhumbatron.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.time.format.DateTimeParseException;

/**
 * Reads and writes single envelope fields. The schema has already checked the document when these
 * run; the checks here are a second line so that a gap in the schema still gives an {@link
 * EnvelopeException} naming the field, never a NullPointerException.
 */
final class JsonFields {

  static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private JsonFields() {}

  static String text(ObjectNode tree, String name) {
    String value = optionalText(tree, name);
    return Check.required("/" + name, value);
  }

  static String optionalText(ObjectNode tree, String name) {
    JsonNode node = tree.get(name);
    if (node == null || node.isNull()) {
      return null;
    }
    if (!node.isTextual()) {
      throw wrongType(name, "a string", node);
    }
    return node.textValue();
  }

  static int integer(ObjectNode tree, String name) {
    Long value = optionalLong(tree, name);
    Check.required("/" + name, value);
    if (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE) {
      throw new EnvelopeException(
          "/" + name, EnvelopeException.MAXIMUM, value + " does not fit a 32-bit integer");
    }
    return value.intValue();
  }

  static Long optionalLong(ObjectNode tree, String name) {
    JsonNode node = tree.get(name);
    if (node == null || node.isNull()) {
      return null;
    }
    if (!node.isNumber() || !node.canConvertToExactIntegral()) {
      throw wrongType(name, "an integer", node);
    }
    if (!node.canConvertToLong()) {
      throw new EnvelopeException(
          "/" + name, EnvelopeException.MAXIMUM, "does not fit a 64-bit integer");
    }
    return node.longValue();
  }

  static Instant instant(ObjectNode tree, String name) {
    return Check.required("/" + name, optionalInstant(tree, name));
  }

  static Instant optionalInstant(ObjectNode tree, String name) {
    String text = optionalText(tree, name);
    if (text == null) {
      return null;
    }
    try {
      return IsoInstants.parse(text);
    } catch (DateTimeParseException e) {
      throw new EnvelopeException(
          "/" + name,
          "format",
          "\"" + Check.abbreviate(text) + "\" is not an ISO-8601 UTC timestamp",
          e);
    }
  }

  static ObjectNode object(ObjectNode tree, String name) {
    JsonNode node = tree.get(name);
    if (node == null || node.isNull()) {
      throw new EnvelopeException("/" + name, EnvelopeException.REQUIRED, "must not be null");
    }
    if (!node.isObject()) {
      throw wrongType(name, "an object", node);
    }
    return (ObjectNode) node;
  }

  static void put(ObjectNode tree, String name, String value) {
    tree.set(name, value == null ? NODES.nullNode() : NODES.textNode(value));
  }

  static void put(ObjectNode tree, String name, Long value) {
    tree.set(name, value == null ? NODES.nullNode() : NODES.numberNode(value));
  }

  static void put(ObjectNode tree, String name, Instant value) {
    // Instant.toString's form: ISO-8601 in UTC with a Z, the form IdFormat.TIMESTAMP accepts.
    put(tree, name, value == null ? null : IsoInstants.format(value));
  }

  private static EnvelopeException wrongType(String name, String expected, JsonNode node) {
    return new EnvelopeException(
        "/" + name,
        EnvelopeException.TYPE,
        "expected " + expected + ", got " + node.getNodeType().name().toLowerCase());
  }
}
