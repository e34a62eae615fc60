package org.rhumbatron.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;

/**
 * The operator's dashboard: one HTML page at {@code /} with its script and style, read once from
 * the jar (no build step). The page reads the JSON routes and sends writes with the token the
 * operator types in; these routes serve nothing else.
 */
final class DashboardRoutes {
  private static final String DIR = "dashboard/";

  private static final String JS = "text/javascript; charset=utf-8";

  /** Asset name to content type: the whole set the page needs. */
  private static final Map<String, String> ASSETS =
      Map.of(
          "common.js", JS,
          "ops.js", JS,
          "projects.js", JS,
          "change.js", JS,
          "trace.js", JS,
          "trace-drawing.js", JS,
          "charts.js", JS,
          "dashboard.js", JS,
          "dashboard.css", "text/css; charset=utf-8");

  private final byte[] page = read("index.html");
  private final Map<String, byte[]> assets = readAll();

  void mount(Javalin app) {
    app.get("/", ctx -> send(ctx, "text/html; charset=utf-8", page));
    app.get(
        "/dashboard/{asset}",
        ctx -> {
          String name = ctx.pathParam("asset");
          if (!ASSETS.containsKey(name)) {
            throw ApiException.notFound("no dashboard asset " + name);
          }
          send(ctx, ASSETS.get(name), assets.get(name));
        });
  }

  private static void send(Context ctx, String type, byte[] body) {
    // The page polls the API; a stale cached copy after an upgrade would poll old shapes.
    ctx.status(200).header("Cache-Control", "no-cache").contentType(type).result(body);
  }

  private static Map<String, byte[]> readAll() {
    Map<String, byte[]> out = new java.util.HashMap<>();
    ASSETS.keySet().forEach(name -> out.put(name, read(name)));
    return Map.copyOf(out);
  }

  private static byte[] read(String name) {
    try (InputStream in = DashboardRoutes.class.getResourceAsStream(DIR + name)) {
      if (in == null) {
        throw new IllegalStateException("the jar lacks " + DIR + name);
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + DIR + name, e);
    }
  }
}
