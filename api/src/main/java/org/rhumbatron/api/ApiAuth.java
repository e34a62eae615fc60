package org.rhumbatron.api;

import io.javalin.http.Context;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Optional;
import org.rhumbatron.api.AuthFailures.Reason;

/**
 * Admits each matched request for a {@link Principal} whose role may take the route's {@link
 * Access}, within its credential's rate. A bearer value is {@code api.token} (an operator), a
 * stored credential ({@code rbt_...}, looked up in the database on every request), or a task token
 * ({@code rtk_...}), which passes here for the report routes only and is verified against its Task
 * by those routes. A credential sent with an open read is checked all the same. The comparison with
 * {@code api.token} takes the same time wherever the tokens differ.
 */
final class ApiAuth {
  static final String NO_TOKEN =
      "writes are refused: no API token is configured (set api.token or RHUMBATRON_API_TOKEN)";
  static final String OPERATOR_TOKEN_ID = "api.token";

  private final ApiAccess access;
  private final byte[] token;
  private final Credentials credentials;
  private final RateLimits limits;
  private final AuthFailures failures;

  ApiAuth(ApiAccess access, Credentials credentials, AuthFailures failures) {
    this.access = access;
    this.token =
        access.apiToken() == null ? null : access.apiToken().getBytes(StandardCharsets.UTF_8);
    this.credentials = credentials;
    this.limits = new RateLimits(access.clock());
    this.failures = failures;
  }

  boolean configured() {
    return token != null;
  }

  void check(Context ctx) {
    Access needs = Access.of(ctx.method(), ctx.endpointHandlerPath(), access.metricsClosed());
    String header = ctx.header("Authorization");
    if (header == null) {
      admitWithout(ctx, needs);
      return;
    }
    if (!header.regionMatches(true, 0, "Bearer ", 0, 7) || header.substring(7).isBlank()) {
      throw unauthorized(ctx, Reason.INVALID, "the header is not Authorization: Bearer <token>");
    }
    String bearer = header.substring(7).strip();
    Admitted admitted = admit(bearer).orElse(null);
    if (admitted == null) {
      if (needs != Access.PUBLIC && needs != Access.READ && !anyCredential()) {
        failures.failed(ctx.ip(), Reason.INVALID, NO_TOKEN);
        throw new ApiException(403, null, NO_TOKEN);
      }
      throw unauthorized(ctx, Reason.INVALID, "the bearer token is unknown or revoked");
    }
    Principal who = admitted.who();
    if (!who.role().may(needs)) {
      failures.failed(ctx.ip(), Reason.FORBIDDEN, "");
      throw new ApiException(
          403,
          null,
          (who.role() == Role.AGENT ? "an " : "a ")
              + who.role().wireName()
              + " credential may not "
              + ctx.method()
              + " "
              + ctx.path()
              + ": it needs "
              + needs.leastRole());
    }
    limit(ctx, rateKey(who, bearer), admitted.rateLimit());
    ctx.attribute(Principal.ATTRIBUTE, who);
  }

  private void admitWithout(Context ctx, Access needs) {
    if (needs == Access.PUBLIC) {
      return;
    }
    if (needs == Access.READ && access.readsOpen()) {
      limit(ctx, "address " + ctx.ip(), access.rateLimit());
      return;
    }
    if (needs != Access.READ && !anyCredential()) {
      failures.failed(ctx.ip(), Reason.MISSING, NO_TOKEN);
      throw new ApiException(403, null, NO_TOKEN);
    }
    throw unauthorized(
        ctx,
        Reason.MISSING,
        (needs == Access.READ ? "a read" : "a write")
            + " needs the header Authorization: Bearer <token> of "
            + (needs == Access.READ ? "a " : "an ")
            + needs.leastRole()
            + " credential");
  }

  /** A principal with the request rate of its credential. */
  private record Admitted(Principal who, int rateLimit) {}

  private Optional<Admitted> admit(String bearer) {
    if (token != null && MessageDigest.isEqual(token, bearer.getBytes(StandardCharsets.UTF_8))) {
      Principal operator = new Principal(Role.OPERATOR, OPERATOR_TOKEN_ID, OPERATOR_TOKEN_ID, null);
      return Optional.of(new Admitted(operator, access.rateLimit()));
    }
    if (bearer.startsWith(Role.TASK_TOKEN_PREFIX)) {
      return Optional.of(
          new Admitted(new Principal(Role.TASK, null, null, bearer), access.rateLimit()));
    }
    if (!bearer.startsWith(Credentials.TOKEN_PREFIX)) {
      return Optional.empty();
    }
    return credentials
        .find(bearer)
        .map(
            c -> {
              credentials.used(c);
              int rate = c.rateLimit() == null ? access.rateLimit() : c.rateLimit();
              return new Admitted(new Principal(c.role(), c.id(), c.name(), null), rate);
            });
  }

  private static String rateKey(Principal who, String bearer) {
    // A task token has no row: its hash keys it, the token itself stays out of memory maps.
    return who.credentialId() != null
        ? "credential " + who.credentialId()
        : "task " + Credentials.sha256(bearer);
  }

  private void limit(Context ctx, String key, int perSecond) {
    long wait = limits.take(key, perSecond);
    if (wait > 0) {
      failures.failed(ctx.ip(), Reason.RATE_LIMITED, "");
      ctx.header("Retry-After", Long.toString(wait));
      throw new ApiException(
          429, null, "too many requests: at most " + perSecond + " per second for this credential");
    }
  }

  private boolean anyCredential() {
    return token != null || credentials.anyLive();
  }

  private ApiException unauthorized(Context ctx, Reason reason, String why) {
    failures.failed(ctx.ip(), reason, why);
    ctx.header(
        "WWW-Authenticate", reason == Reason.MISSING ? "Bearer" : "Bearer error=\"invalid_token\"");
    return new ApiException(401, null, why);
  }
}
