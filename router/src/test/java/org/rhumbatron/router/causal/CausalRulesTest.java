package org.rhumbatron.router.causal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.rhumbatron.lifecycle.routes.ModelRouted;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.db.TestDatabases;
import org.rhumbatron.testkit.http.LocalMessagesApi;
import org.rhumbatron.testkit.http.LocalMessagesApi.Answer;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The seed's causal rules, one row per rule and per overlap case, on a project whose active Agents
 * hold {@code api} ({@code path:src/api/}), {@code ui} ({@code path:src/ui/}), {@code docs} ({@code
 * path:docs/readme.md}) of Change A and {@code other} ({@code path:other/}) of Change B. Resource
 * Events are written by the Agent of {@code other} unless a row says otherwise.
 */
class CausalRulesTest {
  @RegisterExtension static final NatsServerExtension nats = new NatsServerExtension();

  private TestDatabase db;
  private CausalFixture c;

  /** The fixture on a fresh database of {@code kind}, closed after the test. */
  private CausalFixture fixture(TestDatabase.Kind kind) throws Exception {
    db = TestDatabases.create(kind);
    c = new CausalFixture(nats.url(), db.url(), Map.of());
    return c;
  }

  @AfterEach
  void close() {
    if (c != null) {
      c.close();
    }
    if (db != null) {
      db.close();
    }
  }

  /** Each row once per database kind, SQLite first. */
  private static Stream<Arguments> onEachDatabase(Stream<?> rows) {
    List<?> all = rows.toList();
    return Stream.of(TestDatabase.Kind.values())
        .flatMap(kind -> all.stream().map(row -> Arguments.of(kind, row)));
  }

  /**
   * One row: the Event (made from the fixture), what the judge says for a prefix overlap, the cap,
   * the commands expected ({@code <type> <task or change>}) and the Tasks the judge is asked about.
   */
  record Row(
      String name,
      Function<CausalFixture, Event> event,
      String judgeSays,
      int cap,
      List<String> expected,
      List<String> asked) {
    @Override
    public String toString() {
      return name;
    }
  }

  private static Row row(String name, Function<CausalFixture, Event> e, String... expected) {
    return new Row(name, e, "wake", 1_000, List.of(expected), List.of());
  }

  private static Row asking(
      String name,
      Function<CausalFixture, Event> e,
      String says,
      List<String> asked,
      String... expected) {
    return new Row(name, e, says, 1_000, List.of(expected), asked);
  }

  private static Function<CausalFixture, Event> by(String task, EventType type, String key) {
    return c -> c.resourceEvent(type, key, task);
  }

  private static Function<CausalFixture, Event> other(EventType type, String key) {
    return by("other", type, key);
  }

  private static Function<CausalFixture, Event> lifecycle(EventType type, String reason) {
    return c -> {
      TaskInfo api = c.tasks.get("api");
      ObjectNode p = JsonNodeFactory.instance.objectNode();
      if (reason != null) {
        p.put("reason", reason);
      }
      return c.event(
          type, api.changeId(), type.name().startsWith("TASK") ? api.taskId() : null, null, p);
    };
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            // The deterministic rules.
            row("task.ready is ignored", lifecycle(EventType.TASK_READY, null)),
            row("an informational type causes nothing", lifecycle(EventType.TASK_ASSIGNED, null)),
            row(
                "change.created dispatches",
                lifecycle(EventType.CHANGE_CREATED, null),
                "change.dispatch A"),
            row(
                "task.completed dispatches",
                lifecycle(EventType.TASK_COMPLETED, null),
                "change.dispatch A"),
            row("task.failed settles", lifecycle(EventType.TASK_FAILED, null), "change.settle A"),
            row(
                "verification.started(work_graph_completed) composes",
                lifecycle(EventType.VERIFICATION_STARTED, "work_graph_completed"),
                "candidate.create A"),
            row(
                "verification.started for another reason causes nothing",
                lifecycle(EventType.VERIFICATION_STARTED, "rebase")),
            row(
                "artifact.promoted indexes",
                lifecycle(EventType.ARTIFACT_PROMOTED, null),
                "index.build A"),
            row(
                "canonical.advanced recomposes, indexes and wakes every active agent",
                c ->
                    c.event(
                        EventType.CANONICAL_ADVANCED,
                        null,
                        null,
                        "project:" + CausalFixture.P,
                        null),
                "candidates.recompose project",
                "index.build project",
                "agent.wake api",
                "agent.wake ui",
                "agent.wake docs",
                "agent.wake other"),
            // Resource overlap: each resource type, exact.
            row(
                "intent.declared exact wakes",
                other(EventType.INTENT_DECLARED, "path:src/api/"),
                "agent.wake api"),
            row(
                "intent.changed exact wakes",
                other(EventType.INTENT_CHANGED, "path:src/api/"),
                "agent.wake api"),
            row(
                "challenge.created exact wakes",
                other(EventType.CHALLENGE_CREATED, "path:src/api/"),
                "agent.wake api"),
            row(
                "changeset.proposed exact wakes",
                other(EventType.CHANGESET_PROPOSED, "path:src/api/"),
                "agent.wake api"),
            row(
                "claim.released exact wakes",
                other(EventType.CLAIM_RELEASED, "path:src/api/"),
                "agent.wake api"),
            row(
                "claim.expired exact wakes",
                other(EventType.CLAIM_EXPIRED, "path:src/api/"),
                "agent.wake api"),
            row(
                "claim.acquired is informational",
                other(EventType.CLAIM_ACQUIRED, "path:src/api/")),
            row(
                "a file key matches a file scope exactly",
                other(EventType.INTENT_DECLARED, "path:docs/readme.md"),
                "agent.wake docs"),
            // Prefix only, both ways: Clef-flash decides.
            asking(
                "the event's key under an agent's scope asks Clef-flash",
                other(EventType.INTENT_DECLARED, "path:src/api/users.java"),
                "wake",
                List.of("api"),
                "agent.wake api"),
            asking(
                "an agent's scope under the event's key asks Clef-flash",
                other(EventType.CLAIM_RELEASED, "path:src/"),
                "wake",
                List.of("api", "ui"),
                "agent.wake api",
                "agent.wake ui"),
            asking(
                "a prefix without its slash is a path prefix too",
                other(EventType.CLAIM_EXPIRED, "path:src"),
                "wake",
                List.of("api", "ui"),
                "agent.wake api",
                "agent.wake ui"),
            asking(
                "Clef-flash says skip: nothing",
                other(EventType.INTENT_DECLARED, "path:src/ui/button.tsx"),
                "skip",
                List.of("ui")),
            // No overlap.
            row(
                "a key that is not a path prefix overlaps nothing",
                other(EventType.INTENT_DECLARED, "path:src/ap")),
            row(
                "an unrelated key overlaps nothing",
                other(EventType.INTENT_DECLARED, "path:lib/x.java")),
            row(
                "a sibling file overlaps nothing",
                other(EventType.INTENT_DECLARED, "path:docs/readme.mdx")),
            // The Event's own agent.
            row(
                "the event's own agent is not woken",
                by("api", EventType.INTENT_DECLARED, "path:src/api/")),
            asking(
                "the event's own agent is left out of a prefix overlap",
                by("api", EventType.CLAIM_RELEASED, "path:src/"),
                "wake",
                List.of("ui"),
                "agent.wake ui"),
            // The cap.
            new Row(
                "the cap drops the command past it",
                c -> {
                  TaskInfo other = c.tasks.get("other");
                  ObjectNode p = JsonNodeFactory.instance.objectNode();
                  p.put("agentId", other.agentId());
                  p.putArray("resourceKeys").add("path:src/api/").add("path:src/ui/");
                  return c.event(
                      EventType.CHANGESET_PROPOSED,
                      other.changeId(),
                      other.taskId(),
                      "path:src/api/",
                      p);
                },
                "wake",
                1,
                List.of("agent.wake api"),
                List.of()))
        .map(Arguments::of);
  }

  static Stream<Arguments> rowsOnEachDatabase() {
    return onEachDatabase(rows().map(a -> a.get()[0]));
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("rowsOnEachDatabase")
  void routes(TestDatabase.Kind kind, Row row) throws Exception {
    fixture(kind);
    List<String> asked = new CopyOnWriteArrayList<>();
    PrefixOverlapJudge judge =
        (e, m) -> {
          asked.add(
              c.tasks.values().stream()
                  .filter(t -> t.taskId().equals(m.taskId()))
                  .findFirst()
                  .orElseThrow()
                  .key());
          return new ModelRouted(
              e.eventId(),
              e.eventType().wireName(),
              e.projectId(),
              m.changeId(),
              m.taskId(),
              m.agentId(),
              m.eventKey(),
              m.agentKey(),
              row.judgeSays(),
              0.9,
              "model",
              5);
        };
    Event event = row.event().apply(c);
    c.route(c.rules(judge, c.cap(row.cap())), List.of(event));

    assertThat(c.sentAsText()).containsExactlyInAnyOrderElementsOf(row.expected());
    assertThat(asked).containsExactlyInAnyOrderElementsOf(row.asked());
    assertThat(c.f.outbox("model.routed"))
        .as("one model.routed per decision")
        .isEqualTo(row.asked().size());
    long dropped =
        c.f.count(
            "SELECT COUNT(*) FROM platform_metrics WHERE binding = 'METRICS' AND name = ?",
            CommandCap.DROPPED);
    assertThat(dropped).isEqualTo(row.cap() < 1_000 ? 1 : 0);
    c.sent.stream()
        .filter(cmd -> cmd.commandType().wireName().equals("agent.wake"))
        .forEach(
            cmd -> {
              assertThat(cmd.commandId()).isEqualTo("cmd_" + event.eventId() + "_" + cmd.taskId());
              TaskInfo t = c.f.lifecycle.changes().task(cmd.taskId()).orElseThrow();
              assertThat(cmd.payload().path("agentId").asText()).isEqualTo(t.agentId());
              assertThat(cmd.payload().path("attempt").asInt()).isEqualTo(t.attempt());
            });
  }

  /**
   * Three resource Events of one batch that each overlap {@code api} exactly, and one that overlaps
   * {@code ui}: one wake for each Agent, named by the first Event that wakes it, counted once.
   */
  @ParameterizedTest
  @EnumSource(TestDatabase.Kind.class)
  void aBatchWakesEachAgentOnce(TestDatabase.Kind kind) throws Exception {
    fixture(kind);
    List<Event> batch =
        List.of(
            c.resourceEvent(EventType.INTENT_DECLARED, "path:src/api/", "other"),
            c.resourceEvent(EventType.CLAIM_RELEASED, "path:src/api/", "other"),
            c.resourceEvent(EventType.INTENT_DECLARED, "path:src/ui/", "other"),
            c.resourceEvent(EventType.CHANGESET_PROPOSED, "path:src/api/", "other"));
    c.route(c.rules((e, m) -> null, c.cap(1_000)), batch);

    assertThat(c.sentAsText()).containsExactlyInAnyOrder("agent.wake api", "agent.wake ui");
    String api = c.tasks.get("api").taskId();
    assertThat(c.sent.stream().filter(cmd -> api.equals(cmd.taskId())).map(cmd -> cmd.commandId()))
        .containsExactly("cmd_" + batch.get(0).eventId() + "_" + api);
    long counted =
        c.f.count(
            "SELECT COALESCE(SUM(commands), 0) FROM causal_command_counts WHERE change_id = ?",
            c.tasks.get("api").changeId());
    assertThat(counted).as("the cap counts the wakes sent").isEqualTo(2);
  }

  /**
   * A Clef-flash row: how the local Messages API answers (null: a key-less core, or none needed),
   * the calls already made today, and what the router does with the prefix overlap of {@code
   * path:src/api/users.java} on {@code api}'s {@code path:src/api/}.
   */
  record ClefRow(
      String name,
      Answer answer,
      boolean apiKey,
      int callsMadeToday,
      boolean wakes,
      String reason) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Arguments> clefFlashRows() {
    return Stream.of(
            new ClefRow("wake", ClefFlashFixture.routeWake("wake", 0.9), true, 0, true, "model"),
            new ClefRow("skip", ClefFlashFixture.routeWake("skip", 0.9), true, 0, false, "model"),
            new ClefRow(
                "skip at 0.69 abstains and wakes",
                ClefFlashFixture.routeWake("skip", 0.69),
                true,
                0,
                true,
                "abstained"),
            new ClefRow(
                "skip at 0.7 skips",
                ClefFlashFixture.routeWake("skip", 0.7),
                true,
                0,
                false,
                "model"),
            new ClefRow(
                "an error wakes",
                Answer.error(529, "overloaded_error", "Overloaded"),
                true,
                0,
                true,
                "error"),
            new ClefRow(
                "a slow answer times out and wakes",
                ClefFlashFixture.routeWake("skip", 0.99).after(Duration.ofSeconds(5)),
                true,
                0,
                true,
                "timeout"),
            new ClefRow("garbage wakes", Answer.garbage(), true, 0, true, "malformed"),
            new ClefRow(
                "no tool call wakes", Answer.text("I would skip."), true, 0, true, "malformed"),
            new ClefRow(
                "call 201 of the day wakes without asking",
                ClefFlashFixture.routeWake("skip", 0.99),
                true,
                200,
                true,
                "daily_cap"),
            new ClefRow(
                "no API key wakes without asking",
                ClefFlashFixture.routeWake("skip", 0.99),
                false,
                0,
                true,
                "no_api_key"))
        .map(Arguments::of);
  }

  static Stream<Arguments> clefFlashRowsOnEachDatabase() {
    return onEachDatabase(clefFlashRows().map(a -> a.get()[0]));
  }

  @ParameterizedTest(name = "{0}: Clef-flash: {1}")
  @MethodSource("clefFlashRowsOnEachDatabase")
  void routesAPrefixOverlapByClefFlash(TestDatabase.Kind kind, ClefRow row) throws Exception {
    fixture(kind);
    try (LocalMessagesApi api = LocalMessagesApi.start()) {
      api.enqueue(row.answer());
      Settings settings = ClefFlashFixture.settings(api, Map.of());
      c.f.database.inTransaction(
          tx ->
              tx.update(
                  "INSERT INTO clef_flash_calls (day_utc, calls) VALUES (?, ?)",
                  LocalDate.ofInstant(c.f.clock.instant(), ZoneOffset.UTC).toString(),
                  row.callsMadeToday()));
      try (ClefFlash clef =
          ClefFlash.create(
              c.f.database,
              settings,
              row.apiKey() ? ClefFlashFixture.ENVIRONMENT : Map.of(),
              c.f.clock)) {
        Event event = c.resourceEvent(EventType.CLAIM_RELEASED, "path:src/api/users.java", "other");
        // A slow answer is not waited for: its row's decision is "timeout", not the answer's.
        c.route(c.rules(clef, c.cap(1_000)), List.of(event));

        assertThat(c.sentAsText()).isEqualTo(row.wakes() ? List.of("agent.wake api") : List.of());
        boolean asked = row.apiKey() && row.callsMadeToday() < 200;
        assertThat(api.requests()).isEqualTo(asked ? 1 : 0);
        if (asked) {
          String body = api.lastRequest().orElseThrow().body();
          assertThat(body)
              .contains("path:src/api/users.java", "path:src/api/", "edit api", event.eventId());
        }
        // A decision made without a call is recorded beside the route, not before it returns.
        await()
            .atMost(Duration.ofSeconds(10))
            .untilAsserted(
                () -> {
                  List<String> routed =
                      c.f.database.read(
                          tx ->
                              tx.query(
                                  "SELECT decision || ' ' || reason FROM model_routes"
                                      + " WHERE event_id = ?",
                                  rs -> rs.getString(1),
                                  event.eventId()));
                  assertThat(routed)
                      .containsExactly((row.wakes() ? "wake " : "skip ") + row.reason());
                });
        assertThat(c.f.outbox("model.routed")).isEqualTo(1);
        assertThat(
                c.f.count(
                    "SELECT COUNT(*) FROM platform_metrics WHERE binding = 'METRICS' AND name = ?"
                        + " AND event_id = ?",
                    ClefFlash.METRIC,
                    event.eventId()))
            .isEqualTo(1);
      }
    }
  }
}
