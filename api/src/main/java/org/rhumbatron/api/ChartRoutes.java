package org.rhumbatron.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * {@code GET /api/charts}: the samples of the dashboard's charts, the last 15 minutes or those
 * after {@code since} (epoch milliseconds), so a page that polls reads only what is new.
 */
final class ChartRoutes {
  private final Supplier<ChartWindow> window;

  ChartRoutes(Supplier<ChartWindow> window) {
    this.window = window;
  }

  void mount(Javalin app) {
    app.get("/api/charts", this::charts);
  }

  private void charts(Context ctx) {
    ChartWindow w = window.get();
    if (w == null) {
      throw ApiException.notFound("this core samples no charts");
    }
    String since = Query.optional(ctx, "since");
    Instant after = null;
    if (since != null) {
      try {
        after = Instant.ofEpochMilli(Long.parseLong(since));
      } catch (NumberFormatException e) {
        throw ApiException.badRequest("since", "epoch milliseconds, a whole number");
      }
    }
    List<Object> samples = new ArrayList<>();
    for (ChartWindow.Sample s : w.since(after)) {
      samples.add(Json.object("at", s.at().toEpochMilli(), "values", s.values()));
    }
    Json.answer(
        ctx,
        200,
        Json.object(
            "spanSeconds",
            w.span().toSeconds(),
            "everySeconds",
            w.every().toMillis() / 1000.0,
            "samples",
            samples));
  }
}
