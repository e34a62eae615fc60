package org.rhumbatron.router.causal;

import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.rhumbatron.lifecycle.claims.ActiveScopes;
import org.rhumbatron.lifecycle.routes.ModelRouted;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.metrics.DataPoint;
import org.rhumbatron.platform.metrics.MetricsBinding;
import org.rhumbatron.platform.metrics.PlatformMetrics;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.router.causal.ModelRoute.Decision;
import org.rhumbatron.router.causal.ModelRoute.Reason;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The seed's Clef-flash: decides a prefix-only resource overlap with one model call. In order:
 *
 * <ol>
 *   <li>no API key configured: wake ({@code no_api_key}), nothing spent;
 *   <li>the UTC day's {@code causal.clef-flash-calls-per-day} calls are used up: wake ({@code
 *       daily_cap}) without asking;
 *   <li>the call times out, fails or answers malformed: wake ({@code timeout}, {@code error},
 *       {@code malformed});
 *   <li>the answer's probability is below {@code causal.clef-flash-abstain-below}: wake ({@code
 *       abstained});
 *   <li>else the model's decision ({@code model}).
 * </ol>
 *
 * <p>Each decision writes one {@code model_route} point to METRICS: value and label {@code
 * latency_ms} are the call's milliseconds (0 without a call); labels {@code decision}, {@code
 * reason}, {@code probability} (when answered), {@code event_type} and {@code project}.
 *
 * <p>Call {@link #route} outside any write transaction: it reserves the call and writes its point
 * in short transactions of its own, and on SQLite a call from inside another write transaction
 * would wait on the write lock that transaction holds. Every time read goes through the clock; the
 * day rolls at 00:00 UTC. Thread-safe.
 */
public final class ClefFlash implements PrefixOverlapJudge, AutoCloseable {
  public static final String METRIC = "model_route";

  private static final Logger log = LoggerFactory.getLogger(ClefFlash.class);

  private final Database db;
  private final Optional<ModelClient> model;
  private final ClefFlashBudget budget;
  private final double abstainBelow;
  private final Clock clock;
  private final PlatformMetrics metrics;
  private volatile LocalDate capLoggedOn;

  /**
   * @param model the model to ask, or empty when no API key is configured
   */
  public ClefFlash(Database db, Optional<ModelClient> model, Settings settings, Clock clock) {
    this.db = Objects.requireNonNull(db, "db");
    this.model = Objects.requireNonNull(model, "model");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.budget = new ClefFlashBudget(db, settings.get(Settings.CLEF_FLASH_CALLS_PER_DAY));
    this.abstainBelow = settings.get(Settings.CLEF_FLASH_ABSTAIN_BELOW);
    this.metrics = new PlatformMetrics(db, clock, MetricsBinding.METRICS);
  }

  /**
   * Clef-flash on the Messages API of the settings' base URL and model, with the key from {@code
   * environment} (core passes {@code System.getenv()}) under the name {@code
   * causal.clef-flash-api-key-env}. Without a key every question wakes.
   */
  public static ClefFlash create(
      Database db, Settings settings, Map<String, String> environment, Clock clock) {
    String variable = settings.get(Settings.CLEF_FLASH_API_KEY_ENV);
    String key = environment.get(variable);
    if (key == null || key.isBlank()) {
      // A choice the seed allows, not a fault: said once at start, beside core's other settings.
      log.info("clef-flash: no API key in ${}; every prefix overlap wakes its agent", variable);
      return new ClefFlash(db, Optional.empty(), settings, clock);
    }
    ModelClient client =
        new AnthropicModelClient(
            settings.get(Settings.CLEF_FLASH_BASE_URL),
            key,
            settings.get(Settings.CLEF_FLASH_MODEL),
            settings.get(Settings.CLEF_FLASH_TIMEOUT));
    log.info(
        "clef-flash: model {} at {}, timeout {}, key from ${}",
        settings.get(Settings.CLEF_FLASH_MODEL),
        settings.get(Settings.CLEF_FLASH_BASE_URL),
        settings.get(Settings.CLEF_FLASH_TIMEOUT),
        variable);
    return new ClefFlash(db, Optional.of(client), settings, clock);
  }

  /**
   * Wake or skip the Agent of {@code q}; never throws for the model's sake, only the database's.
   */
  public ModelRoute route(ClefFlashQuestion q) {
    ModelRoute route = decide(q);
    record(q, route);
    return route;
  }

  /** The causal rules' question: the Event, the two keys and the Task's title. */
  @Override
  public ModelRouted decide(Event event, ActiveScopes.Match match) {
    ModelRoute route =
        route(
            new ClefFlashQuestion(
                event.projectId(),
                match.changeId(),
                match.taskId(),
                match.taskTitle() == null ? "" : match.taskTitle(),
                event.eventId(),
                event.eventType(),
                match.eventKey(),
                match.agentKey()));
    return new ModelRouted(
        event.eventId(),
        event.eventType().wireName(),
        event.projectId(),
        match.changeId(),
        match.taskId(),
        match.agentId(),
        match.eventKey(),
        match.agentKey(),
        route.decision().wireName(),
        route.probability(),
        route.reason().wireName(),
        route.latencyMs());
  }

  private ModelRoute decide(ClefFlashQuestion q) {
    if (model.isEmpty()) {
      return ModelRoute.wake(Reason.NO_API_KEY, 0);
    }
    LocalDate day = LocalDate.ofInstant(clock.instant(), ZoneOffset.UTC);
    if (!budget.reserve(day)) {
      if (!day.equals(capLoggedOn)) {
        capLoggedOn = day;
        log.warn(
            "clef-flash: the {} calls of {} are used; prefix overlaps wake until 00:00 UTC",
            budget.callsPerDay(),
            day);
      }
      return ModelRoute.wake(Reason.DAILY_CAP, 0);
    }
    long start = clock.millis();
    ModelAnswer answer;
    try {
      answer = model.get().ask(q);
    } catch (ModelCallException e) {
      log.warn("{}; waking", e.getMessage());
      return ModelRoute.wake(e.failure().reason(), since(start));
    } catch (RuntimeException e) {
      log.warn("clef-flash error for event {}: {}; waking", q.eventId(), e.toString());
      return ModelRoute.wake(Reason.ERROR, since(start));
    }
    long latency = since(start);
    if (answer.probability() < abstainBelow) {
      return new ModelRoute(Decision.WAKE, answer.probability(), latency, Reason.ABSTAINED);
    }
    return new ModelRoute(answer.decision(), answer.probability(), latency, Reason.MODEL);
  }

  private long since(long startMs) {
    return Math.max(0, clock.millis() - startMs);
  }

  private void record(ClefFlashQuestion q, ModelRoute route) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("decision", route.decision().wireName());
    labels.put("reason", route.reason().wireName());
    if (route.probability() != null) {
      labels.put("probability", Double.toString(route.probability()));
    }
    labels.put("latency_ms", Long.toString(route.latencyMs()));
    labels.put("event_type", q.eventType().wireName());
    labels.put("project", q.projectId());
    DataPoint point =
        new DataPoint(
            METRIC, route.latencyMs(), labels, q.projectId(), q.eventId(), clock.instant());
    db.inTransaction(
        tx -> {
          metrics.write(tx, point);
          return null;
        });
  }

  @Override
  public void close() {
    if (model.isPresent() && model.get() instanceof AutoCloseable closeable) {
      try {
        closeable.close();
      } catch (Exception e) {
        log.warn("clef-flash: closing the model client failed: {}", e.toString());
      }
    }
  }
}
