package org.rhumbatron.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * A request body read strictly: at most {@link #MAX_BYTES}, one JSON object, only the fields the
 * endpoint names, each of the kind it needs. Every refusal is a 400 (413 for size) that names the
 * field and the rule, raised before the handler changes anything.
 */
final class JsonBody {
  /** The largest body the API reads (1 MiB); the HTTP server's own limit is the same. */
  static final int MAX_BYTES = 1 << 20;

  private static final ObjectReader READER =
      Json.MAPPER.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private final JsonNode node;
  private final String prefix;

  private JsonBody(JsonNode node, String prefix) {
    this.node = node;
    this.prefix = prefix;
  }

  /** The body of {@code ctx}; an empty body is {@code {}}. */
  static JsonBody read(Context ctx, String... allowed) {
    long declared = ctx.req().getContentLengthLong();
    if (declared > MAX_BYTES) {
      throw ApiException.tooLarge(MAX_BYTES);
    }
    byte[] bytes;
    try (InputStream in = ctx.req().getInputStream()) {
      bytes = in.readNBytes(MAX_BYTES + 1);
    } catch (IOException e) {
      throw ApiException.badRequest(null, "cannot read the request body: " + e.getMessage());
    }
    if (bytes.length > MAX_BYTES) {
      throw ApiException.tooLarge(MAX_BYTES);
    }
    JsonNode node;
    if (new String(bytes, java.nio.charset.StandardCharsets.UTF_8).isBlank()) {
      node = Json.MAPPER.createObjectNode();
    } else {
      try {
        node = READER.readTree(bytes);
      } catch (JsonProcessingException e) {
        throw ApiException.badRequest(
            null, "malformed JSON: " + e.getOriginalMessage() + location(e));
      } catch (IOException e) {
        throw ApiException.badRequest(null, "malformed JSON: " + e.getMessage());
      }
    }
    if (node == null || !node.isObject()) {
      throw ApiException.badRequest(null, "the body must be a JSON object");
    }
    return new JsonBody(node, "").only(allowed);
  }

  private static String location(JsonProcessingException e) {
    return e.getLocation() == null
        ? ""
        : " at line " + e.getLocation().getLineNr() + " column " + e.getLocation().getColumnNr();
  }

  /** Refuses a field not in {@code allowed}. */
  JsonBody only(String... allowed) {
    Set<String> names = Set.of(allowed);
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (!names.contains(name)) {
        throw ApiException.badRequest(
            prefix + name, "unknown field; allowed: " + String.join(", ", new TreeSet<>(names)));
      }
    }
    return this;
  }

  /** A required non-empty string. */
  String text(String name) {
    String value = optionalText(name);
    if (value == null) {
      throw ApiException.badRequest(prefix + name, "required, a non-empty string");
    }
    return value;
  }

  /** A non-empty string, or null when absent or null. */
  String optionalText(String name) {
    JsonNode v = node.get(name);
    if (v == null || v.isNull()) {
      return null;
    }
    if (!v.isTextual() || v.asText().isEmpty()) {
      throw ApiException.badRequest(prefix + name, "must be a non-empty string");
    }
    return v.asText();
  }

  /** A string that may be JSON null (as a group's command type): present, text or null. */
  String nullableText(String name) {
    JsonNode v = node.get(name);
    if (v == null) {
      throw ApiException.badRequest(prefix + name, "required, a string or null");
    }
    if (v.isNull()) {
      return null;
    }
    if (!v.isTextual()) {
      throw ApiException.badRequest(prefix + name, "must be a string or null");
    }
    return v.asText();
  }

  /** A required whole number of at least 1. */
  int positiveInt(String name) {
    JsonNode v = node.get(name);
    if (v == null || v.isNull()) {
      throw ApiException.badRequest(prefix + name, "required, a whole number of 1 or more");
    }
    if (!v.isIntegralNumber() || !v.canConvertToInt() || v.asInt() < 1) {
      throw ApiException.badRequest(prefix + name, "must be a whole number of 1 or more");
    }
    return v.asInt();
  }

  /** A whole number of at least 1, or null when absent or null. */
  Integer optionalPositiveInt(String name) {
    JsonNode v = node.get(name);
    return v == null || v.isNull() ? null : positiveInt(name);
  }

  /** A list of strings, empty when absent. */
  List<String> textList(String name) {
    JsonNode v = node.get(name);
    if (v == null || v.isNull()) {
      return List.of();
    }
    if (!v.isArray()) {
      throw ApiException.badRequest(prefix + name, "must be an array of strings");
    }
    List<String> out = new ArrayList<>();
    for (int i = 0; i < v.size(); i++) {
      if (!v.get(i).isTextual()) {
        throw ApiException.badRequest(prefix + name + "[" + i + "]", "must be a string");
      }
      out.add(v.get(i).asText());
    }
    return out;
  }

  /** A required non-empty array of objects, each read strictly with {@code allowed}. */
  List<JsonBody> objects(String name, String... allowed) {
    JsonNode v = node.get(name);
    if (v == null || v.isNull()) {
      throw ApiException.badRequest(prefix + name, "required, an array of objects");
    }
    if (!v.isArray()) {
      throw ApiException.badRequest(prefix + name, "must be an array of objects");
    }
    List<JsonBody> out = new ArrayList<>();
    for (int i = 0; i < v.size(); i++) {
      String at = prefix + name + "[" + i + "]";
      if (!v.get(i).isObject()) {
        throw ApiException.badRequest(at, "must be an object");
      }
      out.add(new JsonBody(v.get(i), at + ".").only(allowed));
    }
    return out;
  }
}
