package org.rhumbatron.api;

import io.javalin.http.Context;
import java.util.List;

/** Query parameters read strictly: a bad one is a 400 naming it. */
final class Query {
  private Query() {}

  /** {@code limit}: 1..max, {@code fallback} when absent. */
  static int limit(Context ctx, int fallback, int max) {
    String raw = ctx.queryParam("limit");
    if (raw == null) {
      return fallback;
    }
    try {
      int n = Integer.parseInt(raw);
      if (n >= 1 && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // answered below
    }
    throw ApiException.badRequest("limit", "a whole number in 1.." + max);
  }

  /** A parameter that must be one of {@code allowed}, {@code fallback} when absent. */
  static String oneOf(Context ctx, String name, String fallback, List<String> allowed) {
    String raw = ctx.queryParam(name);
    if (raw == null) {
      return fallback;
    }
    if (!allowed.contains(raw)) {
      throw ApiException.badRequest(name, "one of " + String.join(", ", allowed));
    }
    return raw;
  }

  /** A non-empty parameter or null. */
  static String optional(Context ctx, String name) {
    String raw = ctx.queryParam(name);
    if (raw != null && raw.isEmpty()) {
      throw ApiException.badRequest(name, "must not be empty when given");
    }
    return raw;
  }
}
