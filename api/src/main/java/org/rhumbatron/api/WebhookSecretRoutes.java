package org.rhumbatron.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.rhumbatron.platform.secrets.SigningKeys;
import org.rhumbatron.platform.secrets.SigningKeys.Key;
import org.rhumbatron.platform.secrets.SigningKeys.Purpose;

/**
 * The secrets webhooks are signed with. A new secret is shown once, in the answer that made it; the
 * one before it keeps signing for the overlap, so the Agent's side can switch without a lost call.
 * The list shows ids and times, never a secret.
 */
final class WebhookSecretRoutes {
  private final SigningKeys keys;
  private final Duration overlap;

  WebhookSecretRoutes(SigningKeys keys, Duration overlap) {
    this.keys = keys;
    this.overlap = overlap;
  }

  void mount(Javalin app) {
    app.post("/api/webhooks/secrets", this::create);
    app.get("/api/webhooks/secrets", this::list);
    app.delete("/api/webhooks/secrets/{keyId}", this::revoke);
  }

  private void create(Context ctx) {
    JsonBody.read(ctx);
    Key key = keys.rotate(Purpose.WEBHOOK, overlap);
    Map<String, Object> body = view(key);
    body.put("secret", key.webhookSecret());
    Json.answer(ctx, 201, body);
  }

  private void list(Context ctx) {
    List<Map<String, Object>> rows = keys.valid(Purpose.WEBHOOK).stream().map(this::view).toList();
    Json.answer(ctx, 200, Json.object("secrets", rows));
  }

  private void revoke(Context ctx) {
    String keyId = ctx.pathParam("keyId");
    if (!keys.revoke(Purpose.WEBHOOK, keyId)) {
      throw ApiException.notFound("no webhook secret " + keyId + " in use");
    }
    Json.answer(ctx, 200, Json.object("keyId", keyId, "revoked", true));
  }

  private Map<String, Object> view(Key key) {
    return Json.object(
        "keyId",
        key.keyId(),
        "createdAt",
        Json.time(key.createdAt()),
        "expiresAt",
        Json.time(key.expiresAt()));
  }
}
