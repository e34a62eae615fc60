package org.rhumbatron.protocol;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.ValidationMessage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Encodes and decodes the envelopes as UTF-8 JSON, checking each against its JSON Schema on the way
 * in, so that nothing malformed enters the process. On the way out, an {@link Event} or {@link
 * Command} is already valid: its constructor checks every rule of its schema (the round-trip
 * properties decode what this class encodes, through the schema), so encoding checks only the
 * payload size and skips the schema validator, the most expensive step of a publish. A dead letter
 * is checked against its schema both ways.
 *
 * <p>Every rejection is an {@link EnvelopeException} naming the field and the rule: not JSON (or
 * truncated, or with a duplicate key or trailing data), a missing or wrongly typed field, an
 * unknown type name, an extra field, a payload over {@link #maxPayloadBytes()} (measured as its
 * compact UTF-8 JSON), or input so large that it cannot be a valid envelope. Never a
 * NullPointerException or a raw Jackson exception.
 *
 * <p>Thread-safe and reusable: make one and share it.
 */
public final class EnvelopeCodec {

  /** Largest payload, as compact UTF-8 JSON, unless the constructor says otherwise: 256 KiB. */
  public static final int DEFAULT_MAX_PAYLOAD_BYTES = 256 * 1024;

  /**
   * Room for the fields around the payload. The schema bounds each of them, and all together stay
   * far below this; input beyond {@code maxPayloadBytes + ENVELOPE_OVERHEAD_BYTES} is rejected
   * before it is parsed.
   */
  public static final int ENVELOPE_OVERHEAD_BYTES = 64 * 1024;

  /** Classpath resources of the schemas, for callers that serve or publish them. */
  public static final String EVENT_SCHEMA = Schemas.EVENT_RESOURCE;

  public static final String COMMAND_SCHEMA = Schemas.COMMAND_RESOURCE;
  public static final String DEAD_LETTER_SCHEMA = Schemas.DEAD_LETTER_RESOURCE;

  // A dead letter carries its original as an escaped string, and the original may itself have
  // been oversized; room for that, but still a bound.
  private static final int DEAD_LETTER_FACTOR = 8;

  /** How much larger than its input a parsed payload may write out: see checkPayloadSize. */
  private static final int PAYLOAD_GROWTH = 3;

  private static final ObjectMapper MAPPER =
      JsonMapper.builder()
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .build();

  /** For the envelopes that have no fast path: every decode goes through the schema. */
  private static final Predicate<ObjectNode> ALWAYS_SCHEMA = tree -> false;

  private final int maxPayloadBytes;
  private final int maxEnvelopeBytes;
  private final int maxDeadLetterBytes;

  /** A codec with {@link #DEFAULT_MAX_PAYLOAD_BYTES}. */
  public EnvelopeCodec() {
    this(DEFAULT_MAX_PAYLOAD_BYTES);
  }

  /**
   * @param maxPayloadBytes largest payload, as compact UTF-8 JSON, at least 2 ({@code {}})
   */
  public EnvelopeCodec(int maxPayloadBytes) {
    if (maxPayloadBytes < 2) {
      throw new IllegalArgumentException(
          "maxPayloadBytes must be at least 2 (an empty object), got " + maxPayloadBytes);
    }
    this.maxPayloadBytes = maxPayloadBytes;
    long envelope = (long) maxPayloadBytes + ENVELOPE_OVERHEAD_BYTES;
    this.maxEnvelopeBytes = (int) Math.min(envelope, Integer.MAX_VALUE - 8);
    this.maxDeadLetterBytes = (int) Math.min(envelope * DEAD_LETTER_FACTOR, Integer.MAX_VALUE - 8);
  }

  public int maxPayloadBytes() {
    return maxPayloadBytes;
  }

  /**
   * Decodes an Event. An envelope of exactly the schema's fields, each of its JSON type, with its
   * timestamp in the schema's form, is read by the Event constructor, which checks every other rule
   * of the schema; anything else, and anything that constructor refuses, goes through the schema
   * validator, so a rejection names the field and rule exactly as the schema does. The schema
   * validator costs more than the rest of a decode, and the event router decodes every Event.
   */
  public Event decodeEvent(byte[] json) {
    return decode(
        json,
        maxEnvelopeBytes,
        Schemas.EVENT,
        true,
        EnvelopeJson::readEvent,
        EnvelopeJson::hasEventShape);
  }

  public Event decodeEvent(String json) {
    return decodeEvent(utf8(json));
  }

  public byte[] encodeEvent(Event event) {
    return encode(event, EnvelopeJson::write);
  }

  /** The Event as a validated JSON tree (a fresh copy), e.g. for an HTTP response. */
  public ObjectNode toJson(Event event) {
    return tree(event, EnvelopeJson::write, true).deepCopy();
  }

  public Command decodeCommand(byte[] json) {
    return decode(
        json, maxEnvelopeBytes, Schemas.COMMAND, true, EnvelopeJson::readCommand, ALWAYS_SCHEMA);
  }

  public Command decodeCommand(String json) {
    return decodeCommand(utf8(json));
  }

  public byte[] encodeCommand(Command command) {
    return encode(command, EnvelopeJson::write);
  }

  /** The Command as a validated JSON tree (a fresh copy), e.g. for an HTTP response. */
  public ObjectNode toJson(Command command) {
    return tree(command, EnvelopeJson::write, true).deepCopy();
  }

  public DeadLetterMessage decodeDeadLetter(byte[] json) {
    return decode(
        json,
        maxDeadLetterBytes,
        Schemas.DEAD_LETTER,
        false,
        EnvelopeJson::readDeadLetter,
        ALWAYS_SCHEMA);
  }

  public DeadLetterMessage decodeDeadLetter(String json) {
    return decodeDeadLetter(utf8(json));
  }

  public byte[] encodeDeadLetter(DeadLetterMessage message) {
    ObjectNode tree = tree(message, EnvelopeJson::write, false);
    validate(Schemas.DEAD_LETTER, tree);
    byte[] bytes = serialize(tree);
    if (bytes.length > maxDeadLetterBytes) {
      throw tooLarge(bytes.length, maxDeadLetterBytes);
    }
    return bytes;
  }

  private <T> T decode(
      byte[] json,
      int maxBytes,
      JsonSchema schema,
      boolean hasPayload,
      Function<ObjectNode, T> reader,
      Predicate<ObjectNode> readableWithoutSchema) {
    if (json == null) {
      throw new EnvelopeException(
          EnvelopeException.WHOLE_ENVELOPE, EnvelopeException.REQUIRED, "no input");
    }
    if (json.length > maxBytes) {
      throw tooLarge(json.length, maxBytes);
    }
    ObjectNode tree = parse(json);
    if (readableWithoutSchema.test(tree)) {
      try {
        if (hasPayload) {
          checkPayloadSize(tree, json.length);
        }
        return reader.apply(tree);
      } catch (RuntimeException e) {
        // Not valid after all: the schema below names what is wrong.
      }
    }
    validate(schema, tree);
    if (hasPayload) {
      checkPayloadSize(tree, json.length);
    }
    try {
      return reader.apply(tree);
    } catch (EnvelopeException e) {
      throw e;
    } catch (RuntimeException e) {
      // A gap between the schema and the constructors must still honour this class's contract.
      throw new EnvelopeException(
          EnvelopeException.WHOLE_ENVELOPE, "decode", "unexpected error: " + e, e);
    }
  }

  /**
   * The envelope's JSON. The payload is part of it, so when the whole fits in the payload limit the
   * payload does too, and only a larger envelope has its payload measured on its own.
   */
  private <T> byte[] encode(T envelope, Function<T, ObjectNode> writer) {
    ObjectNode tree = tree(envelope, writer, false);
    byte[] bytes = serialize(tree);
    if (bytes.length > maxPayloadBytes) {
      checkPayloadSize(tree);
    }
    return bytes;
  }

  /** The envelope's tree, with its payload size checked (its constructor checked the rest). */
  private <T> ObjectNode tree(T envelope, Function<T, ObjectNode> writer, boolean hasPayload) {
    if (envelope == null) {
      throw new EnvelopeException(
          EnvelopeException.WHOLE_ENVELOPE, EnvelopeException.REQUIRED, "no envelope to encode");
    }
    ObjectNode tree = writer.apply(envelope);
    if (hasPayload) {
      checkPayloadSize(tree);
    }
    return tree;
  }

  private static ObjectNode parse(byte[] json) {
    JsonNode node;
    try {
      node = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw notJson(e);
    } catch (IOException e) {
      throw new EnvelopeException(
          EnvelopeException.WHOLE_ENVELOPE, EnvelopeException.JSON, e.getMessage(), e);
    }
    if (node == null || node.isMissingNode()) {
      throw new EnvelopeException(
          EnvelopeException.WHOLE_ENVELOPE, EnvelopeException.JSON, "empty input");
    }
    if (!node.isObject()) {
      throw new EnvelopeException(
          EnvelopeException.WHOLE_ENVELOPE,
          EnvelopeException.TYPE,
          "expected a JSON object, got " + node.getNodeType().name().toLowerCase());
    }
    return (ObjectNode) node;
  }

  private static EnvelopeException notJson(JsonProcessingException e) {
    String where = "";
    String field = EnvelopeException.WHOLE_ENVELOPE;
    if (e.getProcessor() instanceof JsonParser) {
      String pointer =
          ((JsonParser) e.getProcessor()).getParsingContext().pathAsPointer().toString();
      where = pointer.isEmpty() ? "" : " at " + pointer;
      // A duplicate key is about one field; other syntax errors are about the input as a whole.
      if (e.getOriginalMessage() != null && e.getOriginalMessage().startsWith("Duplicate field")) {
        field = pointer.isEmpty() ? field : pointer;
      }
    }
    String location =
        e.getLocation() == null
            ? ""
            : " (line "
                + e.getLocation().getLineNr()
                + ", column "
                + e.getLocation().getColumnNr()
                + ")";
    return new EnvelopeException(
        field,
        EnvelopeException.JSON,
        "not valid JSON" + where + location + ": " + e.getOriginalMessage(),
        e);
  }

  private static void validate(JsonSchema schema, ObjectNode tree) {
    Set<ValidationMessage> messages = schema.validate(tree);
    if (!messages.isEmpty()) {
      throw SchemaViolations.toException(messages);
    }
  }

  /**
   * {@link #checkPayloadSize(ObjectNode)} for a tree parsed from {@code inputBytes} of JSON. Its
   * payload written again is under PAYLOAD_GROWTH times the input: only numbers grow ({@code 1e6}
   * comes back as {@code 1000000.0}, three times its text, and a separator or key around it makes
   * the ratio smaller), strings and whitespace do not. So a small input needs no measuring.
   */
  private void checkPayloadSize(ObjectNode tree, int inputBytes) {
    if ((long) inputBytes * PAYLOAD_GROWTH > maxPayloadBytes) {
      checkPayloadSize(tree);
    }
  }

  private void checkPayloadSize(ObjectNode tree) {
    JsonNode payload = tree.get("payload");
    if (payload == null || !payload.isObject()) {
      return; // the schema names this one
    }
    int size = serialize(payload).length;
    if (size > maxPayloadBytes) {
      throw new EnvelopeException(
          "/payload",
          EnvelopeException.MAX_BYTES,
          "payload is " + size + " bytes of JSON, more than the " + maxPayloadBytes + " allowed");
    }
  }

  private static byte[] serialize(JsonNode tree) {
    try {
      return MAPPER.writeValueAsBytes(tree);
    } catch (JsonProcessingException e) {
      throw new EnvelopeException(
          EnvelopeException.WHOLE_ENVELOPE, EnvelopeException.JSON, e.getOriginalMessage(), e);
    }
  }

  private static EnvelopeException tooLarge(int size, int maxBytes) {
    return new EnvelopeException(
        EnvelopeException.WHOLE_ENVELOPE,
        EnvelopeException.MAX_BYTES,
        "input is " + size + " bytes, more than the " + maxBytes + " an envelope may take");
  }

  private static byte[] utf8(String json) {
    return json == null ? null : json.getBytes(StandardCharsets.UTF_8);
  }
}
