package org.rhumbatron.server;

import io.javalin.Javalin;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.rhumbatron.api.Api;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Core's HTTP server: the API of {@link Api} (with {@code /healthz} and {@code /readyz}). */
final class HttpServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(HttpServer.class);
  private static final Set<String> METHODS = Set.of("GET", "POST", "PUT", "PATCH", "DELETE");
  // Bounds how long a stopping node's hand-over waits for the API requests it took.
  private static final Duration DRAIN = Duration.ofSeconds(5);

  private final Javalin app;
  private final Api api;
  private final List<String> routes;
  private final HttpListen listen;
  private final List<AutoCloseable> closedWithIt = new CopyOnWriteArrayList<>();
  private volatile boolean closed;

  private HttpServer(Javalin app, Api api, List<String> routes, HttpListen listen) {
    this.app = app;
    this.api = api;
    this.routes = routes;
    this.listen = listen;
  }

  static HttpServer start(HttpListen listen, Api api, CoreMetrics metrics) {
    List<String> routes = new CopyOnWriteArrayList<>();
    HttpTls tls =
        listen.tls()
            ? HttpTls.start(listen.tlsCert(), listen.tlsKey(), listen.tlsCheckEvery())
            : null;
    Javalin app =
        Javalin.create(
            config -> {
              config.showJavalinBanner = false;
              Api.configure(config);
              if (tls != null) {
                config.jetty.addConnector(
                    (server, http) -> tlsConnector(server, http, listen, tls));
              }
              config.events.handlerAdded(
                  h -> {
                    if (METHODS.contains(h.getHttpMethod().name())) {
                      routes.add(h.getHttpMethod().name() + " " + h.getPath());
                    }
                  });
            });
    api.mount(app);
    CoreMetrics.mount(app, metrics);
    try {
      if (tls == null) {
        app.start(listen.bind(), listen.port());
      } else {
        app.start();
      }
    } catch (RuntimeException e) {
      CoreWiring.closeQuietly(tls);
      throw e;
    }
    HttpServer server = new HttpServer(app, api, routes, listen);
    server.closeWith(tls);
    return server;
  }

  /** The one connector of a TLS server: HTTP/1.1 over TLS 1.2 or 1.3 on the bind and port. */
  private static Connector tlsConnector(
      Server server, HttpConfiguration http, HttpListen listen, HttpTls tls) {
    // No SNI host check: the certificate names the public URL's host, which a proxy may differ
    // from, and a wrong certificate fails the client's own check anyway.
    http.addCustomizer(new SecureRequestCustomizer(false, false, -1, false));
    ServerConnector connector =
        new ServerConnector(
            server,
            new SslConnectionFactory(tls.factory(), HttpVersion.HTTP_1_1.asString()),
            new HttpConnectionFactory(http));
    connector.setHost(listen.bind());
    connector.setPort(listen.port());
    return connector;
  }

  int port() {
    return app.port();
  }

  /** The base URL Agents and webhooks are told: {@code http.public-url}, or derived. */
  String publicUrl() {
    return listen.publicUrl(port());
  }

  /** Where and how it listens, for the line core logs when it is up. */
  String describe() {
    return listen.describe(port());
  }

  /** Every route, as {@code METHOD /path/{param}}. */
  List<String> routes() {
    return List.copyOf(routes);
  }

  /**
   * Answers every request from now on with 503 and {@code Retry-After}, saying {@code why}, and
   * waits at most {@link #DRAIN} for those in flight.
   */
  void stopTaking(String why) {
    try {
      int left = api.stopTaking(why, DRAIN);
      if (left > 0) {
        log.warn("{} API requests still running after {}; stopping anyway", left, DRAIN);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** True once the port is closed: a client's connection is refused from then on. */
  boolean closed() {
    return closed;
  }

  /** {@code part} (e.g. the chart sampler, which reads the metrics) closes with the server. */
  void closeWith(AutoCloseable part) {
    if (part != null) {
      closedWithIt.add(part);
    }
  }

  @Override
  public void close() {
    closed = true;
    CoreWiring.closeQuietly(closedWithIt.toArray(AutoCloseable[]::new));
    app.stop();
  }
}
