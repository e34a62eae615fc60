package org.rhumbatron.app;

import io.javalin.Javalin;
import io.nats.client.Connection;
import java.util.LinkedHashMap;
import java.util.Map;

/** Core's HTTP endpoint: {@code /healthz} now, the API and dashboard later. */
final class HttpServer implements AutoCloseable {
  private final Javalin app;

  private HttpServer(Javalin app) {
    this.app = app;
  }

  static HttpServer start(int port, Connection nats, CoreMetrics metrics) {
    Javalin app =
        Javalin.create(config -> config.showJavalinBanner = false)
            .get(
                "/healthz",
                ctx -> {
                  boolean up = nats.getStatus() == Connection.Status.CONNECTED;
                  Map<String, Object> body = new LinkedHashMap<>();
                  body.put("status", up ? "ok" : "degraded");
                  body.put("nats", nats.getStatus().name().toLowerCase());
                  ctx.status(up ? 200 : 503).json(body);
                });
    CoreMetrics.mount(app, metrics);
    app.start("127.0.0.1", port);
    return new HttpServer(app);
  }

  int port() {
    return app.port();
  }

  @Override
  public void close() {
    app.stop();
  }
}
