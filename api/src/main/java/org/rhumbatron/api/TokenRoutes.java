package org.rhumbatron.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import java.util.Map;

/**
 * The operator's credentials: created with a role and a name (the token is in that answer alone),
 * listed without their tokens, revoked by id with effect on the next request on every core.
 */
final class TokenRoutes {
  private final Credentials credentials;

  TokenRoutes(Credentials credentials) {
    this.credentials = credentials;
  }

  void mount(Javalin app) {
    app.post("/api/tokens", this::create);
    app.get(
        "/api/tokens",
        ctx ->
            Json.answer(
                ctx,
                200,
                Map.of("tokens", credentials.list().stream().map(TokenRoutes::view).toList())));
    app.delete("/api/tokens/{credentialId}", this::revoke);
  }

  private void create(Context ctx) {
    JsonBody body = JsonBody.read(ctx, "role", "name", "rateLimit");
    Role role = Role.creatable(body.text("role"));
    Credentials.Created created =
        credentials.create(role, body.text("name"), body.optionalPositiveInt("rateLimit"));
    Map<String, Object> answer = view(created.credential());
    answer.put("token", created.token());
    Json.answer(ctx, 201, answer);
  }

  private void revoke(Context ctx) {
    String id = ctx.pathParam("credentialId");
    if (!credentials.revoke(id)) {
      throw ApiException.notFound("no live credential " + id);
    }
    Json.answer(ctx, 200, Json.object("id", id, "revoked", true));
  }

  static Map<String, Object> view(Credentials.Credential c) {
    return Json.object(
        "id",
        c.id(),
        "role",
        c.role().wireName(),
        "name",
        c.name(),
        "rateLimit",
        c.rateLimit(),
        "createdAt",
        Json.timeMs(c.createdAtMs()),
        "lastUsedAt",
        Json.timeMs(c.lastUsedAtMs()),
        "revokedAt",
        Json.timeMs(c.revokedAtMs()));
  }
}
