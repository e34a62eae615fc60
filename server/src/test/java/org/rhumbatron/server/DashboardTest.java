package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.server.ApiClient.Answer;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServer;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The operator's dashboard in a real headless Chromium (Debian's chromium and chromedriver) against
 * a running core: a dead letter retried with its button, a causal trace followed by clicks, the
 * outbox backlog and NATS banner while NATS is stopped, and a core that stops answering. Assertions
 * read stable DOM ids and data attributes and wait for them; the page polls every 2 s.
 */
class DashboardTest {
  static final String TOKEN = "dash-token-1";
  static final Duration WAIT = DashboardBrowser.WAIT;

  @RegisterExtension static final NatsServerExtension nats = new NatsServerExtension();
  @RegisterExtension static final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir static Path data;

  // The id of a dead-letter message derives from it: each test's message needs its own.
  static final AtomicLong originSequences = new AtomicLong();

  static CoreService core;
  static ApiClient api;
  static DashboardBrowser browser;
  static WebDriver driver;

  @BeforeAll
  static void startCoreAndBrowser() throws Exception {
    core = TestCores.withToken(nats.url(), data, db.database().url(), TOKEN);
    api = ApiClient.of(core, TOKEN);

    browser = DashboardBrowser.start(data);
    driver = browser.driver;
  }

  @AfterAll
  static void stopBrowserAndCore() throws IOException {
    DashboardBrowser.closeBoth(browser, core);
  }

  /** No script error on the page: an uncaught exception stops a poll or a click handler. */
  @AfterEach
  void thePageThrewNothing() {
    assertThat(browser.scriptErrors()).as("script errors in the browser console").isEmpty();
  }

  @Test
  void aDeadLetterIsRetriedWithItsButtonAndShownResolved() throws Exception {
    // A provision that failed its deliveries: the retried attempt succeeds, which closes the row.
    long id = deadLetterOfProvision("p-dash-dl");
    open("");

    WebElement row = waitFor(By.id("dl-" + id));
    assertThat(row.getAttribute("data-status")).isEqualTo("open");
    assertThat(cell(row, "status")).isEqualTo("open");
    assertThat(cell(row, "type")).isEqualTo("project.provision");
    // Its command's trace marks it as dead-lettered.
    String commandId = "cmd_provision_p-dash-dl";
    clickWhenStable(By.cssSelector("#dl-" + id + " a.trace-link[data-id='" + commandId + "']"));
    awaitFocus(commandId, 0, "command project.provision");
    By tag = By.cssSelector("#trace-focus .tag[data-dead-letter='" + id + "']");
    assertThat(waitFor(tag).getAttribute("data-status")).isEqualTo("open");

    clickWhenStable(By.cssSelector("#dl-" + id + " button.retry"));

    waitUntil(
        "dead letter " + id + " closed as succeeded",
        d -> {
          WebElement r = d.findElement(By.id("dl-" + id));
          return "closed".equals(r.getAttribute("data-status"))
              && "succeeded".equals(r.getAttribute("data-resolution"));
        });
    WebElement closed = driver.findElement(By.id("dl-" + id));
    assertThat(cell(closed, "status")).isEqualTo("closed: succeeded");
    assertThat(closed.findElement(By.cssSelector("button.retry")).isEnabled()).isFalse();
    assertThat(driver.findElement(By.id("message")).getText())
        .isEqualTo("dead letter " + id + " sent again");
    JsonNode server = api.get("/api/dead-letters/" + id).body();
    assertThat(server.path("retriedBy").asText()).isEqualTo("dashboard");
    assertThat(server.path("resolution").asText()).isEqualTo("succeeded");
    assertThat(api.get("/api/projects/p-dash-dl").status()).isEqualTo(200);
    waitUntil(
        "the trace shows the dead letter closed",
        d -> "closed".equals(d.findElement(tag).getAttribute("data-status")));
  }

  @Test
  void aCausalTraceIsFollowedThreeLevelsDownByClicks() throws Exception {
    provision("p-dash-trace");
    String changeId = createChain("p-dash-trace", 2);
    await()
        .atMost(WAIT)
        .until(
            () ->
                api.get("/api/changes/" + changeId)
                    .body()
                    .path("state")
                    .asText()
                    .equals("awaiting_approval"));
    String completed = firstEvent("p-dash-trace", "task.completed");
    open("project=p-dash-trace");

    // From the project's recent events into the trace of the first Task's completion.
    clickWhenStable(By.cssSelector("#events-body a.trace-link[data-id='" + completed + "']"));
    awaitFocus(completed, 0, "event task.completed");
    assertThat(driver.findElement(By.id("trace-path")).getText())
        .isEqualTo("nothing recorded: a root");

    // task.completed -> change.dispatch -> agent.wake (ready) -> agent.woken.
    String dispatch = clickChild("change.dispatch");
    awaitFocus(dispatch, 1, "command change.dispatch");
    assertThat(focusField("causedBy")).isEqualTo(completed);
    String wake = clickChild("agent.wake");
    awaitFocus(wake, 2, "command agent.wake");
    assertThat(wake).endsWith("_ready");
    assertThat(focusField("causedBy")).isEqualTo(dispatch);
    String woken = clickChild("agent.woken");
    awaitFocus(woken, 3, "event agent.woken");
    assertThat(focusField("causedBy")).isEqualTo(wake);
    assertThat(focusField("changeId")).isEqualTo(changeId);
    List<String> crumbs =
        driver.findElements(By.cssSelector("#trace-path a.trace-crumb")).stream()
            .map(e -> e.getAttribute("data-id"))
            .toList();
    assertThat(crumbs).containsExactly(completed, dispatch, wake);

    // A crumb leads back up: the dispatch again, one level below the root.
    clickWhenStable(By.cssSelector("#trace-path a.trace-crumb[data-id='" + dispatch + "']"));
    awaitFocus(dispatch, 1, "command change.dispatch");
  }

  /**
   * Each stream's row of oldest-unread ages: a number per consumer core sampled (0 once it has read
   * everything), so an operator sees how far behind the archiver and analytics are.
   */
  @Test
  void theAgeOfEachConsumersOldestUnreadEventIsShown() throws Exception {
    provision("p-dash-age");
    String stream = EventStreams.streamName(EventStreams.streamIndex("p-dash-age"));
    open("");
    waitUntil(
        "the projector's age on " + stream + " is 0",
        d -> {
          List<WebElement> rows = d.findElements(By.id("age-" + stream));
          return !rows.isEmpty() && "0".equals(cell(rows.get(0), "project-view-projector"));
        });
    WebElement row = driver.findElement(By.id("age-" + stream));
    assertThat(cell(row, "audit-archiver")).matches("\\d+|not made yet");
    assertThat(cell(row, "analytics-projector")).matches("\\d+|not made yet");
    assertThat(driver.findElements(By.cssSelector("#ages-body tr"))).hasSize(8);
  }

  @Test
  void theOutboxBacklogShowsWhileNatsIsStoppedAndDrainsWhenItReturns() throws Exception {
    provision("p-dash-nats");
    String stream = EventStreams.streamName(EventStreams.streamIndex("p-dash-nats"));
    open("");
    waitUntil(
        "NATS up, no backlog, project.created projected",
        d -> natsIs("up") && totalBacklog() == 0 && "0".equals(flowCell(stream, "projection")));
    assertThat(driver.findElement(By.id("nats-banner")).isDisplayed()).isFalse();
    long sequenceBefore = Long.parseLong(flowCell(stream, "lastSequence"));

    nats.server().stop();
    try {
      waitUntil("the page says NATS is down", d -> natsIs("down"));
      // A Change written while NATS is down: its Events wait in the outbox.
      Answer created =
          api.post(
              "/api/projects/p-dash-nats/changes",
              Map.of(
                  "clientRequestId",
                  "req-dash-nats",
                  "tasks",
                  List.of(Map.of("key", "a", "resourceScopes", List.of("path:a/")))));
      assertThat(created.status()).as(created.text()).isEqualTo(201);
      waitUntil("a backlog on " + stream, d -> backlogOf(stream) >= 1);
      WebElement banner = driver.findElement(By.id("nats-banner"));
      assertThat(banner.isDisplayed()).isTrue();
      assertThat(banner.getText()).startsWith("NATS is down").contains("Events wait in the outbox");
      assertThat(driver.findElement(By.id("flow-" + stream)).getAttribute("class"))
          .contains("waiting");
      // The streams cannot be read meanwhile; the page says so instead of showing old numbers.
      assertThat(cell(driver.findElement(By.id("flow-" + stream)), "lastSequence")).isEqualTo("—");
    } finally {
      nats.server().restart();
    }

    // Caught up: the outbox is empty, the stream holds the Events, the projector read them.
    waitUntil(
        "NATS up again, the backlog published and projected",
        d ->
            natsIs("up")
                && totalBacklog() == 0
                && flowCell(stream, "lastSequence").matches("[0-9]+")
                && Long.parseLong(flowCell(stream, "lastSequence")) > sequenceBefore
                && "0".equals(flowCell(stream, "projection")));
    assertThat(driver.findElement(By.id("nats-banner")).isDisplayed()).isFalse();
    assertThat(driver.findElement(By.id("flow-" + stream)).getAttribute("class")).isNullOrEmpty();
    await()
        .atMost(WAIT)
        .until(() -> api.get("/api/outbox/backlog").body().path("backlog").asLong() == 0);
  }

  @Test
  void aCoreThatStopsAnsweringIsNamedAndItsLastNumbersStay(@TempDir Path otherData)
      throws Exception {
    // A core of its own, so the class's core keeps serving the other tests.
    try (NatsServer otherNats = NatsServer.start()) {
      CoreService other =
          CoreService.start(
              new CoreConfig(otherNats.url(), otherData, null, 0, Settings.defaults()));
      try {
        driver.get("http://127.0.0.1:" + other.httpPort() + "/");
        waitUntil(
            "the page of the other core, NATS up",
            d ->
                natsIs("up")
                    && "up".equals(body().getAttribute("data-core"))
                    && totalBacklog() == 0);
      } finally {
        other.close();
      }
      waitUntil(
          "the page says core does not answer",
          d -> "down".equals(body().getAttribute("data-core")));
      WebElement banner = driver.findElement(By.id("core-banner"));
      assertThat(banner.isDisplayed()).isTrue();
      assertThat(banner.getText()).startsWith("Core does not answer");
      // Nothing is known of NATS without core: the NATS banner would blame the wrong part.
      assertThat(driver.findElement(By.id("nats-banner")).isDisplayed()).isFalse();
      assertThat(body().getAttribute("data-nats")).isEqualTo("unknown");
      assertThat(driver.findElement(By.id("status")).getText())
          .startsWith("no answer from core since");
      assertThat(driver.findElements(By.cssSelector("#flow-body tr")))
          .hasSize(EventStreams.STREAM_COUNT);
      assertThat(driver.findElements(By.cssSelector("#queues-body tr"))).isNotEmpty();
    }
  }

  @Test
  void aCoreWhoseReadsNeedACredentialAsksForOneAndReadsWithIt(@TempDir Path otherData)
      throws Exception {
    // A core of its own: another port is another origin, so no token is stored for it yet.
    try (NatsServer otherNats = NatsServer.start();
        CoreService other =
            CoreService.start(
                new CoreConfig(
                    otherNats.url(),
                    otherData,
                    null,
                    0,
                    Settings.defaults()
                        .with(Map.of("api.token", TOKEN, "api.reads", "credential"))))) {
      driver.get("http://127.0.0.1:" + other.httpPort() + "/");
      waitUntil(
          "the page asks for a credential",
          d -> "wanted".equals(body().getAttribute("data-credential")));
      assertThat(driver.findElement(By.id("message")).getText())
          .isEqualTo(
              "a read needs the header Authorization: Bearer <token> of a reader credential:"
                  + " enter a reader or operator token at the top");
      assertThat(body().getAttribute("data-nats")).as("not blamed on NATS").isEqualTo("up");
      driver.findElement(By.id("token")).sendKeys(TOKEN);
      waitUntil(
          "the page reads with the credential",
          d -> "given".equals(body().getAttribute("data-credential")));
      waitUntil("the flow table filled", d -> totalBacklog() == 0);
      assertThat(driver.findElement(By.id("message")).isDisplayed()).isFalse();
    }
  }

  // ---- the page ----

  private static WebElement body() {
    return browser.body();
  }

  private static void open(String query) {
    browser.open(core.httpPort(), "token=" + TOKEN + (query.isEmpty() ? "" : "&" + query));
  }

  private static WebElement waitFor(By by) {
    return browser.waitFor(by);
  }

  private static void waitUntil(String what, Function<WebDriver, Boolean> until) {
    browser.waitUntil(what, until);
  }

  private static void clickWhenStable(By by) {
    browser.clickWhenStable(by);
  }

  /** Clicks the focus's direct child of a type in the trace tree; answers its id. */
  private static String clickChild(String type) {
    By by = By.cssSelector("#trace-tree a.trace-node[data-depth='1'][data-type='" + type + "']");
    String id = waitFor(by).getAttribute("data-id");
    clickWhenStable(
        By.cssSelector("#trace-tree a.trace-node[data-depth='1'][data-id='" + id + "']"));
    return id;
  }

  private static void awaitFocus(String id, int depth, String label) {
    waitUntil(
        "trace focus " + id + " at depth " + depth,
        d -> {
          WebElement trace = d.findElement(By.id("trace"));
          return id.equals(trace.getAttribute("data-focus"))
              && String.valueOf(depth).equals(trace.getAttribute("data-depth"));
        });
    assertThat(driver.findElement(By.id("trace-focus-label")).getText()).isEqualTo(label);
    assertThat(focusField("id")).isEqualTo(id);
    // Only elements in the focus panel: a stray text node once read "null" under the fields.
    assertThat(
            ((JavascriptExecutor) driver)
                .executeScript(
                    "return [...document.getElementById('trace-focus').childNodes]"
                        + ".filter((n) => n.nodeType !== Node.ELEMENT_NODE).length"))
        .isEqualTo(0L);
  }

  private static String focusField(String field) {
    return driver
        .findElement(By.cssSelector("#trace-focus dd[data-field='" + field + "']"))
        .getText();
  }

  private static boolean natsIs(String state) {
    return state.equals(body().getAttribute("data-nats"));
  }

  private static long backlogOf(String stream) {
    List<WebElement> rows = driver.findElements(By.id("flow-" + stream));
    return rows.isEmpty() ? -1 : Long.parseLong(cell(rows.get(0), "backlog"));
  }

  /** The backlog over every stream row; -1 before the rows are there. */
  private static long totalBacklog() {
    List<WebElement> rows = driver.findElements(By.cssSelector("#flow-body tr"));
    if (rows.size() != EventStreams.STREAM_COUNT) {
      return -1;
    }
    long sum = 0;
    for (WebElement row : rows) {
      sum += Long.parseLong(cell(row, "backlog"));
    }
    return sum;
  }

  private static String flowCell(String stream, String field) {
    return cell(driver.findElement(By.id("flow-" + stream)), field);
  }

  private static String cell(WebElement row, String field) {
    return row.findElement(By.cssSelector("td[data-field='" + field + "']")).getText();
  }

  // ---- core ----

  /** A dead letter of a {@code project.provision}, as the integration consumer leaves one. */
  private static long deadLetterOfProvision(String projectId) throws Exception {
    return DashboardFixtures.deadLetter(
        core,
        api,
        TestDeadLetters.provision(projectId, "Dash"),
        "provisioner unreachable",
        originSequences.incrementAndGet(),
        "projectId=" + projectId);
  }

  private static void provision(String projectId) throws Exception {
    DashboardFixtures.provision(api, projectId);
  }

  /** A Change of Tasks t0 -> t1 -> ...: each completion dispatches the next Task. */
  private static String createChain(String projectId, int length) throws Exception {
    List<Map<String, Object>> tasks = new ArrayList<>();
    for (int i = 0; i < length; i++) {
      tasks.add(
          Map.of(
              "key",
              "t" + i,
              "dependsOn",
              i == 0 ? List.of() : List.of("t" + (i - 1)),
              "resourceScopes",
              List.of("path:src/" + projectId + "/" + i)));
    }
    Answer a =
        api.post(
            "/api/projects/" + projectId + "/changes",
            Map.of("clientRequestId", "req-" + projectId, "tasks", tasks));
    assertThat(a.status()).as(a.text()).isEqualTo(201);
    return a.body().path("changeId").asText();
  }

  private static String firstEvent(String projectId, String type) throws Exception {
    return DashboardFixtures.firstEvent(api, projectId, type);
  }
}
