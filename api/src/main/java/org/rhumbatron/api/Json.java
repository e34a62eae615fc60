package org.rhumbatron.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.javalin.http.Context;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** The API's JSON: one mapper, and the one way a handler answers. */
final class Json {
  static final ObjectMapper MAPPER = new ObjectMapper();

  /** What every 503 tells the client to wait before it retries (here or on another node). */
  static final int RETRY_AFTER_SECONDS = 1;

  private Json() {}

  static void answer(Context ctx, int status, Object body) {
    if (status == 503) {
      ctx.header("Retry-After", Integer.toString(RETRY_AFTER_SECONDS));
    }
    try {
      ctx.status(status).contentType("application/json").result(MAPPER.writeValueAsBytes(body));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write the answer as JSON", e);
    }
  }

  /** The error shape: {@code {"error": message, "field": field}}. */
  static Map<String, Object> error(String message, String field) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("error", message);
    body.put("field", field);
    return body;
  }

  /** An ordered map from alternating keys and values (values may be null). */
  static Map<String, Object> object(Object... keysAndValues) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      out.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return out;
  }

  static String time(Instant instant) {
    return instant == null ? null : instant.toString();
  }

  static String timeMs(Long epochMs) {
    return epochMs == null ? null : Instant.ofEpochMilli(epochMs).toString();
  }

  /** Stored JSON text as a tree, or the text itself when it is not JSON. */
  static Object embedded(String text) {
    if (text == null) {
      return null;
    }
    try {
      JsonNode node = MAPPER.readTree(text);
      return node == null ? text : node;
    } catch (JsonProcessingException e) {
      return text;
    }
  }
}
