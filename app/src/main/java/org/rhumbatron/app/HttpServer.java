package org.rhumbatron.app;

import io.javalin.Javalin;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.rhumbatron.app.api.Api;

/** Core's HTTP server: the API of {@link Api} (with {@code /healthz} and {@code /readyz}). */
final class HttpServer implements AutoCloseable {
  private static final Set<String> METHODS = Set.of("GET", "POST", "PUT", "PATCH", "DELETE");

  private final Javalin app;
  private final List<String> routes;

  private HttpServer(Javalin app, List<String> routes) {
    this.app = app;
    this.routes = routes;
  }

  static HttpServer start(int port, Api api, CoreMetrics metrics) {
    List<String> routes = new CopyOnWriteArrayList<>();
    Javalin app =
        Javalin.create(
            config -> {
              config.showJavalinBanner = false;
              Api.configure(config);
              config.events.handlerAdded(
                  h -> {
                    if (METHODS.contains(h.getHttpMethod().name())) {
                      routes.add(h.getHttpMethod().name() + " " + h.getPath());
                    }
                  });
            });
    api.mount(app);
    CoreMetrics.mount(app, metrics);
    app.start("127.0.0.1", port);
    return new HttpServer(app, routes);
  }

  int port() {
    return app.port();
  }

  /** Every route, as {@code METHOD /path/{param}}. */
  List<String> routes() {
    return List.copyOf(routes);
  }

  @Override
  public void close() {
    app.stop();
  }
}
