package org.rhumbatron.api;

import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Set;
import org.rhumbatron.lifecycle.TaskTokens;

/**
 * Writes (every method but GET, HEAD and OPTIONS) need {@code Authorization: Bearer <api.token>}.
 * Without a token configured every write is refused with 403; a missing or wrong token is 401.
 * Reads stay open. The comparison takes the same time wherever the tokens differ. A task token
 * ({@code rtk_...}) passes on an Agent's report routes only, which check it themselves.
 */
final class BearerAuth {
  private static final Set<HandlerType> READS =
      Set.of(HandlerType.GET, HandlerType.HEAD, HandlerType.OPTIONS);
  static final String NO_TOKEN =
      "writes are refused: no API token is configured (set api.token or RHUMBATRON_API_TOKEN)";

  private final byte[] token;

  BearerAuth(String token) {
    this.token = token == null || token.isEmpty() ? null : token.getBytes(StandardCharsets.UTF_8);
  }

  boolean configured() {
    return token != null;
  }

  void check(Context ctx) {
    if (READS.contains(ctx.method())) {
      return;
    }
    if (taskToken(ctx) != null && AgentRoutes.REPORT_PATH.matcher(ctx.path()).matches()) {
      return; // the report route checks the task token itself
    }
    if (token == null) {
      throw new ApiException(403, null, NO_TOKEN);
    }
    String header = ctx.header("Authorization");
    if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
      ctx.header("WWW-Authenticate", "Bearer");
      throw new ApiException(401, null, "a write needs the header Authorization: Bearer <token>");
    }
    byte[] given = header.substring(7).trim().getBytes(StandardCharsets.UTF_8);
    if (!MessageDigest.isEqual(token, given)) {
      ctx.header("WWW-Authenticate", "Bearer error=\"invalid_token\"");
      throw new ApiException(401, null, "the bearer token is not the configured api.token");
    }
  }

  /** The bearer value when it is a task token ({@code rtk_...}), else null. */
  static String taskToken(Context ctx) {
    String header = ctx.header("Authorization");
    if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return null;
    }
    String value = header.substring(7).trim();
    return value.startsWith(TaskTokens.PREFIX) ? value : null;
  }
}
