package org.rhumbatron.protocol;

import static org.rhumbatron.protocol.JsonFields.NODES;
import static org.rhumbatron.protocol.JsonFields.instant;
import static org.rhumbatron.protocol.JsonFields.integer;
import static org.rhumbatron.protocol.JsonFields.object;
import static org.rhumbatron.protocol.JsonFields.optionalInstant;
import static org.rhumbatron.protocol.JsonFields.optionalLong;
import static org.rhumbatron.protocol.JsonFields.optionalText;
import static org.rhumbatron.protocol.JsonFields.put;
import static org.rhumbatron.protocol.JsonFields.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * Maps the envelopes to JSON trees and back, field by field in the seed's order. Hand-written
 * rather than Jackson data binding so that the wire form (wire names, ISO-8601 instants, explicit
 * nulls) does not depend on how a caller configured an ObjectMapper.
 */
final class EnvelopeJson {

  private EnvelopeJson() {}

  static ObjectNode write(Event e) {
    ObjectNode tree = NODES.objectNode();
    put(tree, "eventId", e.eventId());
    put(tree, "eventType", e.eventType().wireName());
    put(tree, "eventVersion", (long) e.eventVersion());
    put(tree, "tenantId", e.tenantId());
    put(tree, "projectId", e.projectId());
    put(tree, "changeId", e.changeId());
    put(tree, "taskId", e.taskId());
    put(tree, "actor", e.actor());
    put(tree, "resource", e.resource());
    put(tree, "canonicalGeneration", e.canonicalGeneration());
    put(tree, "causedBy", e.causedBy());
    put(tree, "correlationId", e.correlationId());
    put(tree, "timestamp", e.timestamp());
    tree.set("payload", e.payloadView());
    return tree;
  }

  /**
   * The part of the Event schema that {@link #readEvent} does not check: every field is there and
   * no other, strings are strings, integers are integer tokens (not {@code 1.0}), the payload is an
   * object, and the timestamp has the schema's form ({@link java.time.Instant#parse} takes more).
   * Stricter than the schema where that is simpler; the codec then asks the schema.
   */
  static boolean hasEventShape(ObjectNode tree) {
    if (tree.size() != EVENT_FIELDS) {
      return false;
    }
    for (String name : EVENT_TEXT) {
      JsonNode n = tree.get(name);
      if (n == null || !n.isTextual()) {
        return false;
      }
    }
    for (String name : EVENT_OPTIONAL_TEXT) {
      JsonNode n = tree.get(name);
      if (n == null || !(n.isTextual() || n.isNull())) {
        return false;
      }
    }
    JsonNode version = tree.get("eventVersion");
    JsonNode generation = tree.get("canonicalGeneration");
    JsonNode payload = tree.get("payload");
    return version != null
        && version.isIntegralNumber()
        && generation != null
        && (generation.isIntegralNumber() || generation.isNull())
        && payload != null
        && payload.isObject()
        && IdFormat.isTimestamp(tree.get("timestamp").textValue());
  }

  private static final List<String> EVENT_TEXT =
      List.of(
          "eventId", "eventType", "tenantId", "projectId", "actor", "correlationId", "timestamp");
  private static final List<String> EVENT_OPTIONAL_TEXT =
      List.of("changeId", "taskId", "resource", "causedBy");
  // The text fields, eventVersion, canonicalGeneration and payload.
  private static final int EVENT_FIELDS = EVENT_TEXT.size() + EVENT_OPTIONAL_TEXT.size() + 3;

  static Event readEvent(ObjectNode tree) {
    return new Event(
        text(tree, "eventId"),
        EventType.fromWire(text(tree, "eventType")),
        integer(tree, "eventVersion"),
        text(tree, "tenantId"),
        text(tree, "projectId"),
        optionalText(tree, "changeId"),
        optionalText(tree, "taskId"),
        text(tree, "actor"),
        optionalText(tree, "resource"),
        optionalLong(tree, "canonicalGeneration"),
        optionalText(tree, "causedBy"),
        text(tree, "correlationId"),
        instant(tree, "timestamp"),
        object(tree, "payload"));
  }

  static ObjectNode write(Command c) {
    ObjectNode tree = NODES.objectNode();
    put(tree, "commandId", c.commandId());
    put(tree, "commandType", c.commandType().wireName());
    put(tree, "projectId", c.projectId());
    put(tree, "changeId", c.changeId());
    put(tree, "taskId", c.taskId());
    put(tree, "attempt", (long) c.attempt());
    put(tree, "createdAt", c.createdAt());
    put(tree, "deadline", c.deadline());
    tree.set("payload", c.payloadView());
    return tree;
  }

  static Command readCommand(ObjectNode tree) {
    return new Command(
        text(tree, "commandId"),
        CommandType.fromWire(text(tree, "commandType")),
        optionalText(tree, "projectId"),
        optionalText(tree, "changeId"),
        optionalText(tree, "taskId"),
        integer(tree, "attempt"),
        instant(tree, "createdAt"),
        optionalInstant(tree, "deadline"),
        object(tree, "payload"));
  }

  static ObjectNode write(DeadLetterMessage d) {
    ObjectNode tree = NODES.objectNode();
    put(tree, "originQueue", d.originQueue().wireName());
    put(tree, "deliveryCount", (long) d.deliveryCount());
    put(tree, "error", d.error());
    put(tree, "original", d.original());
    put(tree, "receivedAt", d.receivedAt());
    return tree;
  }

  static DeadLetterMessage readDeadLetter(ObjectNode tree) {
    return new DeadLetterMessage(
        Queue.fromWire(text(tree, "originQueue")),
        integer(tree, "deliveryCount"),
        text(tree, "error"),
        text(tree, "original"),
        instant(tree, "receivedAt"));
  }
}
