package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.server.ApiClient.Answer;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServer;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The dashboard's drawings in a real headless Chromium against a running core whose simulated
 * Agents take their time (a Task runs for a few seconds, so a poll sees it held): a running
 * Change's Task graph and timeline, the causal trace drawn and followed by clicks, and the charts
 * under load and with a consumer stopped. With {@code -Drhumbatron.screenshots=<dir>} each test
 * also saves a PNG of what it looked at.
 */
class DashboardDrawingsTest {
  static final String TOKEN = "draw-token-1";
  static final Duration WAIT = DashboardBrowser.WAIT;
  static final Set<String> STARTED = Set.of("ready", "assigned", "running");

  @RegisterExtension static final NatsServerExtension nats = new NatsServerExtension();
  @RegisterExtension static final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir static Path data;

  static CoreService core;
  static ApiClient api;
  static DashboardBrowser browser;

  @BeforeAll
  static void startCoreAndBrowser() throws Exception {
    core = slowAgentsCore(nats.url(), data, db.database().url());
    api = ApiClient.of(core, TOKEN);
    browser = DashboardBrowser.start(data);
  }

  @AfterAll
  static void stopBrowserAndCore() throws IOException {
    DashboardBrowser.closeBoth(browser, core);
  }

  @AfterEach
  void thePageThrewNothing() {
    assertThat(browser.scriptErrors()).as("script errors in the browser console").isEmpty();
  }

  @Test
  void aRunningChangeShowsItsGraphMovingAndItsTimelineInOrder() throws Exception {
    provision(api, "p-draw-change");
    // a -> (b, c) -> d: b and c run side by side once a completed.
    String changeId =
        create(
            api,
            "p-draw-change",
            "Add a sign-in page",
            task("a"),
            task("b", "a"),
            task("c", "a"),
            task("d", "b", "c"));
    browser.open(core.httpPort(), "token=" + TOKEN + "&project=p-draw-change&change=" + changeId);
    browser.waitUntil(
        "the graph of four Tasks", d -> d.findElements(By.cssSelector(".task-node")).size() == 4);
    assertThat(browser.driver.findElement(By.id("change-title")).getText())
        .isEqualTo("Add a sign-in page");

    // While a runs, nothing after it has started; each Task's state is the API's at that time.
    browser.waitUntil(
        "a started, the rest pending",
        d ->
            STARTED.contains(stateOf("a"))
                && "pending".equals(stateOf("b"))
                && "pending".equals(stateOf("c"))
                && "pending".equals(stateOf("d")));
    browser.waitUntil("a's Agent shown", d -> node("a").getAttribute("data-agent") != null);
    // The lists: the project has one open Change, its row names it with its progress.
    By changeRow = By.id("change-" + changeId);
    browser.waitUntil(
        "the project's open Change counted",
        d -> "1".equals(cell(By.id("project-p-draw-change"), "openChanges")));
    assertThat(cell(changeRow, "title")).isEqualTo("Add a sign-in page");
    assertThat(cell(changeRow, "progress")).isEqualTo("0 of 4");
    assertThat(node("a").getAttribute("data-attempt")).isEqualTo("1");
    // It moves: a completes, b and c are taken, d still waits for both.
    browser.waitUntil(
        "a completed, b and c under way, d pending",
        d ->
            "completed".equals(stateOf("a"))
                && !"pending".equals(stateOf("b"))
                && !"pending".equals(stateOf("c"))
                && "pending".equals(stateOf("d")));
    browser.waitUntil(
        "every Task completed",
        d -> List.of("a", "b", "c", "d").stream().allMatch(k -> "completed".equals(stateOf(k))));
    browser.waitUntil(
        "the Change's row shows its Tasks done", d -> "4 of 4".equals(cell(changeRow, "progress")));
    Map<String, String> apiStates = new LinkedHashMap<>();
    for (JsonNode t : api.get("/api/changes/" + changeId).body().path("tasks")) {
      apiStates.put(t.path("key").asText(), t.path("state").asText());
    }
    assertThat(apiStates)
        .containsOnly(
            Map.entry("a", "completed"),
            Map.entry("b", "completed"),
            Map.entry("c", "completed"),
            Map.entry("d", "completed"));
    // Edges from each dependency to its dependent.
    assertThat(browser.driver.findElements(By.cssSelector("#task-graph path.task-edge")))
        .hasSize(4);

    // The timeline: the Change's Events in the feed's order, the first one change.created.
    List<String> feed = new ArrayList<>();
    browser.waitUntil(
        "the timeline lists the Change's Events as the API does",
        d -> {
          feed.clear();
          try {
            for (JsonNode e :
                api.get("/api/changes/" + changeId + "/events").body().path("events")) {
              feed.add(e.path("eventId").asText());
            }
          } catch (Exception e) {
            return false;
          }
          return timelineIds().equals(feed);
        });
    List<WebElement> rows = browser.driver.findElements(By.cssSelector("tr.timeline-event"));
    assertThat(rows.get(0).getAttribute("data-type")).isEqualTo("change.created");
    assertThat(rows.stream().map(r -> r.getAttribute("data-type")))
        .filteredOn("task.completed"::equals)
        .hasSize(4);
    assertThat(rows.get(1).findElement(By.cssSelector("td[data-field='gap']")).getText())
        .startsWith("+");
    screenshot(By.id("change-view"), "dashboard-change.png");
  }

  @Test
  void theTraceDrawingOfATaskCompletedReachesTheWakeItCausedByClicks() throws Exception {
    provision(api, "p-draw-trace");
    String changeId = create(api, "p-draw-trace", "Chain", task("t0"), task("t1", "t0"));
    awaitState(api, changeId, "awaiting_approval");
    String completed = firstEvent("p-draw-trace", "task.completed");
    browser.open(core.httpPort(), "token=" + TOKEN + "&trace=" + completed);
    awaitDrawnFocus(completed);
    WebElement root = shape("focus", null);
    assertThat(root.getAttribute("data-kind")).isEqualTo("event");

    String dispatch = clickDrawn("change.dispatch");
    awaitDrawnFocus(dispatch);
    assertThat(shape("focus", null).getAttribute("data-kind")).isEqualTo("command");
    assertThat(shape("ancestor", null).getAttribute("data-id")).isEqualTo(completed);
    String wake = clickDrawn("agent.wake");
    awaitDrawnFocus(wake);
    assertThat(wake).endsWith("_ready");
    assertThat(shape("focus", null).getAttribute("data-kind")).isEqualTo("command");
    // The drawing holds the same ids as GET /api/trace: the wake's own answer names its cause.
    JsonNode trace = api.get("/api/trace/" + wake).body();
    assertThat(trace.path("root").path("id").asText()).isEqualTo(completed);
    assertThat(
            browser
                .driver
                .findElements(By.cssSelector("#trace-drawing g[data-rel='ancestor']"))
                .stream()
                .map(e -> e.getAttribute("data-id")))
        .containsExactly(completed, dispatch);
    browser.waitFor(By.cssSelector("#trace-drawing g[data-rel='child'][data-type='agent.woken']"));
    screenshot(By.id("trace-section"), "dashboard-trace.png");
  }

  @Test
  void aChangesDeadLetterIsDismissedFromItsPage() throws Exception {
    provision(api, "p-draw-dl");
    String changeId = create(api, "p-draw-dl", "Dead letter", task("x"));
    Command dispatch =
        Command.builder()
            .commandId("cmd_draw_dl_dispatch")
            .commandType(CommandType.CHANGE_DISPATCH)
            .projectId("p-draw-dl")
            .changeId(changeId)
            .createdAt(Instant.parse("2026-07-01T00:00:00Z"))
            .payload(JsonNodeFactory.instance.objectNode())
            .build();
    long id =
        DashboardFixtures.deadLetter(
            core, api, dispatch, "dispatcher unreachable", 1000, "changeId=" + changeId);

    browser.open(core.httpPort(), "token=" + TOKEN + "&change=" + changeId);
    By row = By.id("change-dl-" + id);
    browser.waitUntil(
        "the Change's dead letter listed open",
        d -> "open".equals(browser.attribute(row, "data-status")));
    browser.clickWhenStable(By.cssSelector("#change-dl-" + id + " button.dismiss"));
    browser.waitUntil(
        "the dead letter closed as dismissed",
        d ->
            "closed".equals(browser.attribute(row, "data-status"))
                && "dismissed".equals(browser.attribute(row, "data-resolution")));
    assertThat(api.get("/api/dead-letters/" + id).body().path("resolution").asText())
        .isEqualTo("dismissed");
  }

  /** A core of its own: the test stops one of its consumers. */
  @Test
  void theChartsMoveUnderLoadAndShowLagGrowingWhenAConsumerIsStopped(@TempDir Path otherData)
      throws Exception {
    try (NatsServer otherNats = NatsServer.start();
        CoreService other = slowAgentsCore(otherNats.url(), otherData, null)) {
      ApiClient otherApi = ApiClient.of(other, TOKEN);
      browser.open(other.httpPort(), "token=" + TOKEN);
      By published = series("chart-events", "events.published");
      browser.waitUntil("two samples of events.published", d -> count(published) >= 2);
      String before = browser.attribute(published, "points");

      provision(otherApi, "p-draw-load");
      String load = create(otherApi, "p-draw-load", "Load", task("l0"), task("l1", "l0"));
      browser.waitUntil(
          "Events published per second above 0, the line moved",
          d -> max(published) > 0 && !before.equals(browser.attribute(published, "points")));
      browser.waitUntil(
          "Commands handled on agent-wakeups",
          d -> max(series("chart-commands", "commands.agent-wakeups")) > 0);

      // Nothing left to wake: from here on each wake waits on the stopped queue.
      awaitState(otherApi, load, "awaiting_approval");
      other.queues().stop(Queue.AGENT_WAKEUPS);
      By lag = series("chart-lag", "lag.q-agent-wakeups");
      browser.waitUntil("the agent-wakeups lag sampled at 0", d -> last(lag) == 0);
      create(otherApi, "p-draw-load", "Stuck 1", task("s0"), task("s1"));
      browser.waitUntil("the lag grows to 2", d -> last(lag) >= 2);
      create(otherApi, "p-draw-load", "Stuck 2", task("u0"), task("u1"));
      browser.waitUntil("the lag grows to 4", d -> last(lag) >= 4);
      assertThat(count(lag)).isGreaterThanOrEqualTo(3);
      screenshot(By.id("charts-section"), "dashboard-charts.png");
    }
  }

  // ---- the page ----

  private static By series(String chart, String name) {
    return By.cssSelector("#" + chart + " polyline[data-series='" + name + "']");
  }

  private static long count(By series) {
    String c = browser.attribute(series, "data-count");
    return c == null ? 0 : Long.parseLong(c);
  }

  private static double max(By series) {
    String m = browser.attribute(series, "data-max");
    return m == null ? -1 : Double.parseDouble(m);
  }

  private static double last(By series) {
    String l = browser.attribute(series, "data-last");
    return l == null || l.isEmpty() ? -1 : Double.parseDouble(l);
  }

  private static String cell(By row, String field) {
    return browser
        .driver
        .findElement(row)
        .findElement(By.cssSelector("td[data-field='" + field + "']"))
        .getText()
        .trim();
  }

  private static WebElement node(String key) {
    return browser.driver.findElement(By.cssSelector(".task-node[data-key='" + key + "']"));
  }

  private static String stateOf(String key) {
    return browser.attribute(By.cssSelector(".task-node[data-key='" + key + "']"), "data-state");
  }

  private static List<String> timelineIds() {
    return browser.driver.findElements(By.cssSelector("tr.timeline-event")).stream()
        .map(e -> e.getAttribute("data-id"))
        .toList();
  }

  private static WebElement shape(String rel, String type) {
    String typed = type == null ? "" : "[data-type='" + type + "']";
    return browser.waitFor(By.cssSelector("#trace-drawing g[data-rel='" + rel + "']" + typed));
  }

  /** Clicks the drawn child of the focus of a type; answers its id. */
  private static String clickDrawn(String type) {
    String id = shape("child", type).getAttribute("data-id");
    browser.clickWhenStable(
        By.cssSelector("#trace-drawing g[data-rel='child'][data-id='" + id + "']"));
    return id;
  }

  private static void awaitDrawnFocus(String id) {
    browser.waitUntil(
        "the drawing's focus " + id,
        (WebDriver d) -> id.equals(browser.attribute(By.id("trace-drawing"), "data-focus")));
  }

  private static void screenshot(By by, String name) throws Exception {
    String dir = System.getProperty("rhumbatron.screenshots");
    if (dir != null) {
      browser.screenshot(by, Path.of(dir).resolve(name));
    }
  }

  // ---- core ----

  /** Simulated Agents with a step every 600 ms: a Task is held for a few seconds. */
  static CoreService slowAgentsCore(String natsUrl, Path dir, String dbUrl) throws Exception {
    Settings settings =
        Settings.defaults()
            .with(
                Map.of(
                    "agents.simulated.step-delay", "600ms",
                    "verifier.simulated.duration", "0ms",
                    "release.simulated.duration", "0ms",
                    "api.token", TOKEN));
    return CoreService.start(new CoreConfig(natsUrl, dir, dbUrl, 0, settings));
  }

  static Map<String, Object> task(String key, String... dependsOn) {
    return Map.of(
        "key",
        key,
        "dependsOn",
        List.of(dependsOn),
        "resourceScopes",
        List.of("path:" + key + "/"));
  }

  @SafeVarargs
  static String create(
      ApiClient client, String projectId, String title, Map<String, Object>... tasks)
      throws Exception {
    Answer a =
        client.post(
            "/api/projects/" + projectId + "/changes",
            Map.of("clientRequestId", "req-" + title, "title", title, "tasks", List.of(tasks)));
    assertThat(a.status()).as(a.text()).isEqualTo(201);
    return a.body().path("changeId").asText();
  }

  static void provision(ApiClient client, String projectId) throws Exception {
    DashboardFixtures.provision(client, projectId);
  }

  static void awaitState(ApiClient client, String changeId, String state) {
    await()
        .atMost(WAIT)
        .until(
            () ->
                client.get("/api/changes/" + changeId).body().path("state").asText().equals(state));
  }

  private static String firstEvent(String projectId, String type) throws Exception {
    return DashboardFixtures.firstEvent(api, projectId, type);
  }
}
