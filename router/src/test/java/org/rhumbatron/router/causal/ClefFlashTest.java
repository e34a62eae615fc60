package org.rhumbatron.router.causal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.rhumbatron.router.causal.ClefFlashFixture.API_KEY;
import static org.rhumbatron.router.causal.ClefFlashFixture.ENVIRONMENT;
import static org.rhumbatron.router.causal.ClefFlashFixture.callsOn;
import static org.rhumbatron.router.causal.ClefFlashFixture.points;
import static org.rhumbatron.router.causal.ClefFlashFixture.question;
import static org.rhumbatron.router.causal.ClefFlashFixture.routeWake;
import static org.rhumbatron.router.causal.ClefFlashFixture.settings;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.router.causal.ClefFlashFixture.Point;
import org.rhumbatron.router.causal.ModelRoute.Decision;
import org.rhumbatron.router.causal.ModelRoute.Reason;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.http.LocalMessagesApi;
import org.rhumbatron.testkit.http.LocalMessagesApi.Answer;
import org.slf4j.LoggerFactory;

/** Clef-flash against the fake Messages API, on SQLite. */
class ClefFlashTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @RegisterExtension final DatabaseExtension database = DatabaseExtension.sqlite();

  private final SettableClock clock = new SettableClock(Instant.parse("2026-03-04T10:00:00Z"));
  private LocalMessagesApi api;
  private Database db;
  private final List<AutoCloseable> open = new ArrayList<>();

  @BeforeEach
  void start() {
    api = LocalMessagesApi.start();
    db = Database.open(database.database().url());
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
    db.close();
    api.close();
  }

  private ClefFlash flash(Map<String, String> settings, Map<String, String> env, Clock c) {
    ClefFlash flash = ClefFlash.create(db, settings(api, settings), env, c);
    open.add(flash);
    return flash;
  }

  private ClefFlash flash() {
    return flash(Map.of(), ENVIRONMENT, clock);
  }

  private ModelRoute answered(Answer answer) {
    api.enqueue(answer);
    return flash().route(question("evt_1"));
  }

  @Test
  void aWakeAtNinetyWakesOnTheModelsWord() {
    ModelRoute r = answered(routeWake("wake", 0.9));
    assertThat(r.decision()).isEqualTo(Decision.WAKE);
    assertThat(r.reason()).isEqualTo(Reason.MODEL);
    assertThat(r.probability()).isEqualTo(0.9);
    assertThat(r.called()).isTrue();
    assertThat(api.requests()).isEqualTo(1);
  }

  @Test
  void aSkipAtNinetySkips() {
    ModelRoute r = answered(routeWake("skip", 0.9));
    assertThat(r.decision()).isEqualTo(Decision.SKIP);
    assertThat(r.reason()).isEqualTo(Reason.MODEL);
    assertThat(r.probability()).isEqualTo(0.9);
  }

  @Test
  void aSkipBelowTheThresholdIsAnAbstentionThatWakes() {
    ModelRoute r = answered(routeWake("skip", 0.69));
    assertThat(r.decision()).isEqualTo(Decision.WAKE);
    assertThat(r.reason()).isEqualTo(Reason.ABSTAINED);
    assertThat(r.probability()).isEqualTo(0.69);
    assertThat(r.called()).isTrue();
  }

  @Test
  void aSkipAtTheThresholdItselfSkips() {
    ModelRoute r = answered(routeWake("skip", 0.7));
    assertThat(r.decision()).isEqualTo(Decision.SKIP);
    assertThat(r.reason()).isEqualTo(Reason.MODEL);
  }

  @ParameterizedTest
  @CsvSource({
    "500, api_error",
    "529, overloaded_error",
    "401, authentication_error",
    "429, rate_limit_error"
  })
  void anErrorStatusWakesAfterOneRequest(int status, String type) {
    ModelRoute r = answered(Answer.error(status, type, "scripted " + type));
    assertThat(r.decision()).isEqualTo(Decision.WAKE);
    assertThat(r.reason()).isEqualTo(Reason.ERROR);
    assertThat(r.probability()).isNull();
    assertThat(r.called()).isTrue();
    assertThat(api.requests()).as("no retries").isEqualTo(1);
  }

  @Test
  void aSlowAnswerTimesOutAndWakesWithinTheTimeout() {
    Duration sleep = Duration.ofSeconds(10);
    api.enqueue(routeWake("skip", 0.99).after(sleep));
    // The system clock here, so that the route's latency is the real one.
    ClefFlash flash = flash(Map.of("causal.clef-flash-timeout", "500ms"), ENVIRONMENT, clockUtc());
    long start = System.nanoTime();
    ModelRoute r = flash.route(question("evt_slow"));
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    assertThat(r.decision()).isEqualTo(Decision.WAKE);
    assertThat(r.reason()).isEqualTo(Reason.TIMEOUT);
    assertThat(r.called()).isTrue();
    assertThat(took).as("gave up near the timeout").isLessThan(Duration.ofSeconds(3));
    assertThat(r.latencyMs()).isBetween(400L, 3_000L);
    assertThat(api.requests()).as("no retries").isEqualTo(1);
  }

  private static Clock clockUtc() {
    return Clock.systemUTC();
  }

  @Test
  void garbageIsMalformedAndWakes() {
    ModelRoute r = answered(Answer.garbage());
    assertThat(r.decision()).isEqualTo(Decision.WAKE);
    assertThat(r.reason()).isEqualTo(Reason.MALFORMED);
    assertThat(r.probability()).isNull();
  }

  @Test
  void aTextOnlyAnswerIsMalformed() {
    ModelRoute r = answered(Answer.text("I think the agent should wake."));
    assertThat(r.decision()).isEqualTo(Decision.WAKE);
    assertThat(r.reason()).isEqualTo(Reason.MALFORMED);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "{\"decision\":\"maybe\",\"probability\":0.9}",
        "{\"decision\":\"WAKE\",\"probability\":0.9}",
        "{\"decision\":\"skip\",\"probability\":1.5}",
        "{\"decision\":\"skip\",\"probability\":-0.1}",
        "{\"decision\":\"skip\",\"probability\":\"0.9\"}",
        "{\"decision\":\"skip\"}",
        "{\"probability\":0.9}",
        "{\"answer\":\"yes\"}",
        "[\"skip\",0.9]",
        "\"skip\""
      })
  void aToolCallWithWrongInputIsMalformed(String input) {
    ModelRoute r = answered(Answer.toolUse(AnthropicModelClient.TOOL, input));
    assertThat(r.decision()).isEqualTo(Decision.WAKE);
    assertThat(r.reason()).isEqualTo(Reason.MALFORMED);
  }

  @Test
  void aCallOfAnotherToolIsMalformed() {
    ModelRoute r =
        answered(Answer.toolUse("other_tool", "{\"decision\":\"skip\",\"probability\":0.9}"));
    assertThat(r.reason()).isEqualTo(Reason.MALFORMED);
  }

  @Test
  void withoutAnApiKeyItWakesWithoutAskingOrSpending() {
    for (Map<String, String> env :
        List.of(Map.<String, String>of(), Map.of("ANTHROPIC_API_KEY", " "), Map.of("OTHER", "x"))) {
      ModelRoute r = flash(Map.of(), env, clock).route(question("evt_nokey"));
      assertThat(r.decision()).isEqualTo(Decision.WAKE);
      assertThat(r.reason()).isEqualTo(Reason.NO_API_KEY);
      assertThat(r.called()).isFalse();
      assertThat(r.latencyMs()).isZero();
    }
    assertThat(api.requests()).isZero();
    assertThat(callsOn(db, "2026-03-04")).isZero();
  }

  @Test
  void theKeyComesFromTheVariableTheSettingsName() {
    api.answerWith(req -> routeWake("skip", 0.9));
    Map<String, String> env = Map.of("RT_CLEF_KEY", API_KEY);
    ModelRoute r =
        flash(Map.of("causal.clef-flash-api-key-env", "RT_CLEF_KEY"), env, clock)
            .route(question("e"));
    assertThat(r.reason()).isEqualTo(Reason.MODEL);
    assertThat(flash(Map.of(), env, clock).route(question("e")).reason())
        .as("ANTHROPIC_API_KEY is not set")
        .isEqualTo(Reason.NO_API_KEY);
  }

  @Test
  void theTwoHundredAndFirstCallOfTheDayWakesWithoutAsking() {
    api.answerWith(req -> routeWake("skip", 0.9));
    ClefFlash flash = flash();
    for (int i = 1; i <= 200; i++) {
      assertThat(flash.route(question("evt_" + i)).decision())
          .as("call " + i)
          .isEqualTo(Decision.SKIP);
    }
    ModelRoute r = flash.route(question("evt_201"));
    assertThat(r.decision()).isEqualTo(Decision.WAKE);
    assertThat(r.reason()).isEqualTo(Reason.DAILY_CAP);
    assertThat(r.called()).isFalse();
    assertThat(r.probability()).isNull();
    assertThat(api.requests()).isEqualTo(200);
    assertThat(callsOn(db, "2026-03-04")).isEqualTo(200);
  }

  @Test
  void aFailedCallStillCountsTowardTheCap() {
    api.enqueue(Answer.error(500, "api_error", "down"), Answer.garbage());
    api.answerWith(req -> routeWake("skip", 0.9));
    ClefFlash flash = flash(Map.of("causal.clef-flash-calls-per-day", "2"), ENVIRONMENT, clock);
    assertThat(flash.route(question("e1")).reason()).isEqualTo(Reason.ERROR);
    assertThat(flash.route(question("e2")).reason()).isEqualTo(Reason.MALFORMED);
    assertThat(flash.route(question("e3")).reason()).isEqualTo(Reason.DAILY_CAP);
    assertThat(api.requests()).isEqualTo(2);
  }

  @Test
  void eachDecisionWritesOneModelRoutePoint() {
    api.enqueue(
        routeWake("skip", 0.9),
        routeWake("skip", 0.25),
        Answer.error(529, "overloaded_error", "busy"));
    ClefFlash flash = flash(Map.of("causal.clef-flash-calls-per-day", "3"), ENVIRONMENT, clock);
    for (int i = 1; i <= 4; i++) {
      flash.route(question("evt_" + i));
    }
    flash(Map.of(), Map.of(), clock).route(question("evt_5"));
    assertThat(points(db))
        .containsExactly(
            point("evt_1", "skip", "0.9", "model"),
            point("evt_2", "wake", "0.25", "abstained"),
            point("evt_3", "wake", null, "error"),
            point("evt_4", "wake", null, "daily_cap"),
            point("evt_5", "wake", null, "no_api_key"));
  }

  /** A point of the fixture's question at latency 0, its labels as PlatformMetrics sorts them. */
  private static Point point(String event, String decision, String probability, String reason) {
    String labels =
        "{\"decision\":\""
            + decision
            + "\",\"event_type\":\"intent.declared\",\"latency_ms\":\"0\","
            + (probability == null ? "" : "\"probability\":\"" + probability + "\",")
            + "\"project\":\"proj_clef\",\"reason\":\""
            + reason
            + "\"}";
    return new Point(ClefFlash.METRIC, 0, labels, "proj_clef", event);
  }

  @Test
  void aPointsValueIsTheCallsLatency() {
    api.enqueue(routeWake("wake", 0.8).after(Duration.ofMillis(150)));
    ModelRoute r = flash(Map.of(), ENVIRONMENT, clockUtc()).route(question("evt_1"));
    assertThat(r.latencyMs()).isGreaterThanOrEqualTo(150);
    Point p = points(db).get(0);
    assertThat(p.value()).isEqualTo((double) r.latencyMs());
    assertThat(p.labels()).contains("\"latency_ms\":\"" + r.latencyMs() + "\"");
  }

  @Test
  void theRequestForcesTheToolAndCarriesTheQuestion() throws Exception {
    api.enqueue(routeWake("wake", 0.9));
    flash().route(question("evt_42"));
    LocalMessagesApi.Request req = api.lastRequest().orElseThrow();
    assertThat(req.method()).isEqualTo("POST");
    assertThat(req.path()).isEqualTo("/v1/messages");
    assertThat(req.header("x-api-key")).contains(API_KEY);
    assertThat(req.headers())
        .as("the key goes once, as x-api-key")
        .doesNotContainKey("authorization");
    assertThat(req.header("anthropic-version")).isPresent();
    JsonNode body = JSON.readTree(req.body());
    assertThat(body.path("model").asText()).isEqualTo("claude-haiku-4-5");
    assertThat(body.path("max_tokens").asLong()).isBetween(1L, 256L);
    assertThat(body.path("tool_choice").path("type").asText()).isEqualTo("tool");
    assertThat(body.path("tool_choice").path("name").asText()).isEqualTo("route_wake");
    assertThat(body.path("tools")).hasSize(1);
    JsonNode tool = body.path("tools").get(0);
    assertThat(tool.path("name").asText()).isEqualTo("route_wake");
    assertThat(tool.path("input_schema").path("required").toString())
        .isEqualTo("[\"decision\",\"probability\"]");
    assertThat(
            tool.path("input_schema").path("properties").path("decision").path("enum").toString())
        .isEqualTo("[\"wake\",\"skip\"]");
    assertThat(body.path("system").asText()).contains("route_wake");
    String prompt = body.path("messages").get(0).path("content").toString();
    assertThat(prompt)
        .contains("evt_42")
        .contains("intent.declared")
        .contains("src/billing/invoice.ts")
        .contains("src/billing/")
        .contains("Add VAT to invoices");
    assertThat(req.body()).doesNotContain(API_KEY);
  }

  @Test
  void theModelComesFromTheSettings() throws Exception {
    api.enqueue(routeWake("wake", 0.9));
    flash(Map.of("causal.clef-flash-model", "claude-haiku-4-5-20251001"), ENVIRONMENT, clock)
        .route(question("evt_1"));
    JsonNode body = JSON.readTree(api.lastRequest().orElseThrow().body());
    assertThat(body.path("model").asText()).isEqualTo("claude-haiku-4-5-20251001");
  }

  @Test
  void theApiKeyIsInNoLogLineNoPointAndNoDecision() {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    ListAppender<ILoggingEvent> logs = new ListAppender<>();
    logs.start();
    root.addAppender(logs);
    List<String> julLines = new ArrayList<>();
    Handler jul =
        new Handler() {
          @Override
          public void publish(LogRecord r) {
            julLines.add(r.getMessage() + " " + r.getThrown());
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    java.util.logging.Logger.getLogger("").addHandler(jul);
    List<ModelRoute> routes = new ArrayList<>();
    try {
      api.enqueue(
          routeWake("skip", 0.9),
          Answer.error(401, "authentication_error", "invalid x-api-key"),
          Answer.garbage(),
          Answer.text("no tool"),
          routeWake("wake", 0.1),
          routeWake("skip", 0.9).after(Duration.ofSeconds(5)));
      ClefFlash flash = flash(Map.of("causal.clef-flash-calls-per-day", "6"), ENVIRONMENT, clock);
      for (int i = 1; i <= 7; i++) {
        routes.add(flash.route(question("evt_" + i)));
      }
      routes.add(flash(Map.of(), Map.of(), clock).route(question("evt_8")));
    } finally {
      root.detachAppender(logs);
      java.util.logging.Logger.getLogger("").removeHandler(jul);
    }
    assertThat(routes)
        .extracting(ModelRoute::reason)
        .containsExactly(
            Reason.MODEL,
            Reason.ERROR,
            Reason.MALFORMED,
            Reason.MALFORMED,
            Reason.ABSTAINED,
            Reason.TIMEOUT,
            Reason.DAILY_CAP,
            Reason.NO_API_KEY);
    assertThat(api.lastRequest().orElseThrow().header("x-api-key")).contains(API_KEY);
    List<String> text = new ArrayList<>(julLines);
    for (ILoggingEvent e : logs.list) {
      text.add(e.getFormattedMessage());
      if (e.getThrowableProxy() != null) {
        text.add(ThrowableProxyUtil.asString(e.getThrowableProxy()));
      }
    }
    assertThat(text).as("something was logged").isNotEmpty();
    assertThat(String.join("\n", text)).doesNotContain(API_KEY);
    assertThat(points(db))
        .hasSize(8)
        .allSatisfy(p -> assertThat(p.toString()).doesNotContain(API_KEY));
    assertThat(routes).allSatisfy(r -> assertThat(r.toString()).doesNotContain(API_KEY));
  }
}
