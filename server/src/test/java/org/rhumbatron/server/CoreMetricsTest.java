package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.router.causal.AnthropicModelClient;
import org.rhumbatron.router.deadletter.DeadLetter;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.http.LocalMessagesApi;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * {@code GET /metrics} of a running core on a real nats-server and SQLite: every metric is there,
 * and each one moves when its thing happens.
 */
class CoreMetricsTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.sqlite();
  @TempDir Path data;

  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final Pattern LABEL = Pattern.compile("(\\w+)=\"([^\"]*)\"");
  private static final Duration WAIT = Duration.ofSeconds(60);

  private CoreService start(Map<String, String> overrides) throws Exception {
    Settings settings =
        Settings.defaults().with(Map.of("agents.simulated.step-delay", "5ms")).with(overrides);
    return CoreService.start(
        new CoreConfig(nats.url(), data, database.database().url(), 0, settings));
  }

  /** One line of the exposition. */
  record Series(String name, Map<String, String> labels, double value) {}

  static List<Series> scrape(CoreService core) throws Exception {
    HttpResponse<String> response = get(core);
    assertThat(response.statusCode()).isEqualTo(200);
    return parse(response.body());
  }

  /** The series of a Prometheus text exposition. */
  static List<Series> parse(String exposition) {
    List<Series> out = new ArrayList<>();
    for (String line : exposition.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      int brace = line.indexOf('{');
      int space = line.lastIndexOf(' ');
      String name = line.substring(0, brace >= 0 ? brace : space);
      Map<String, String> labels = new HashMap<>();
      if (brace >= 0) {
        Matcher m = LABEL.matcher(line.substring(brace, line.lastIndexOf('}')));
        while (m.find()) {
          labels.put(m.group(1), m.group(2));
        }
      }
      out.add(new Series(name, labels, Double.parseDouble(line.substring(space + 1))));
    }
    return out;
  }

  private static HttpResponse<String> get(CoreService core) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + core.httpPort() + "/metrics"))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The value of the one series of {@code name} with these label pairs. */
  static double value(CoreService core, String name, String... labels) throws Exception {
    List<Series> matches =
        scrape(core).stream()
            .filter(s -> s.name().equals(name))
            .filter(
                s -> {
                  for (int i = 0; i < labels.length; i += 2) {
                    if (!labels[i + 1].equals(s.labels().get(labels[i]))) {
                      return false;
                    }
                  }
                  return true;
                })
            .toList();
    assertThat(matches).as("%s %s", name, List.of(labels)).hasSize(1);
    return matches.get(0).value();
  }

  private static TaskSpec task(String key, String scope, String... dependsOn) {
    return new TaskSpec(key, "edit " + scope, List.of(dependsOn), List.of(scope));
  }

  /** A Change of one Task on {@code project}; returns its id. */
  private static String oneTaskChange(Lifecycle lifecycle, String project) throws Exception {
    return lifecycle
        .changes()
        .create(project, "r1", WorkGraph.of(task("a", "path:a/")))
        .get()
        .change()
        .changeId();
  }

  private static void awaitVerification(Lifecycle lifecycle, String changeId) {
    await()
        .atMost(WAIT)
        .until(() -> lifecycle.changes().change(changeId).orElseThrow().reachedVerification());
  }

  private static Command wake(String commandId, String changeId, String taskId, String agent) {
    ObjectNode payload =
        JsonNodeFactory.instance.objectNode().put("agentId", agent).put("attempt", 1);
    return Command.builder()
        .commandId(commandId)
        .commandType(CommandType.AGENT_WAKE)
        .projectId("p-metrics")
        .changeId(changeId)
        .taskId(taskId)
        .createdAt(Instant.parse("2026-06-01T08:00:00Z"))
        .payload(payload)
        .build();
  }

  @Test
  void everyMetricIsOnMetricsAsPrometheusText() throws Exception {
    try (CoreService core = start(Map.of())) {
      HttpResponse<String> response = get(core);
      assertThat(response.headers().firstValue("Content-Type"))
          .hasValueSatisfying(t -> assertThat(t).startsWith("text/plain; version=0.0.4"));
      List<Series> series = scrape(core);
      assertThat(series)
          .extracting(Series::name)
          .contains(
              "rhumbatron_outbox_backlog",
              "rhumbatron_outbox_failed",
              "rhumbatron_outbox_send_failures_total",
              "rhumbatron_events_published_total",
              "rhumbatron_events_applied_total",
              "rhumbatron_consumer_lag",
              "rhumbatron_queue_depth",
              "rhumbatron_queue_retries_total",
              "rhumbatron_queue_handled_total",
              "rhumbatron_dead_letters_open",
              "rhumbatron_false_wakeups_total",
              "rhumbatron_causal_commands_dropped_total",
              "rhumbatron_clef_flash_decisions_total",
              "rhumbatron_clef_flash_calls_today",
              "rhumbatron_nats_connected",
              "jvm_memory_used_bytes",
              "jvm_gc_live_data_size_bytes",
              "jvm_threads_live_threads",
              "jvm_classes_loaded_classes",
              "system_cpu_count",
              "process_uptime_seconds");
      assertThat(response.body())
          .contains("# TYPE rhumbatron_events_published_total counter")
          .contains("# TYPE rhumbatron_outbox_backlog gauge");
      // One series per subscription, per stream and consumer, per queue and per reason.
      assertThat(series)
          .filteredOn(s -> s.name().equals("rhumbatron_events_applied_total"))
          .hasSize(4);
      assertThat(series).filteredOn(s -> s.name().equals("rhumbatron_consumer_lag")).hasSize(38);
      assertThat(series).filteredOn(s -> s.name().equals("rhumbatron_queue_depth")).hasSize(6);
      assertThat(series)
          .filteredOn(s -> s.name().equals("rhumbatron_dead_letters_open"))
          .hasSize(5);
      assertThat(series)
          .filteredOn(s -> s.name().equals("rhumbatron_clef_flash_decisions_total"))
          .hasSize(7);
      assertThat(value(core, "rhumbatron_nats_connected")).isEqualTo(1);
      assertThat(value(core, "rhumbatron_outbox_backlog")).isZero();
      // the queue consumers exist from the start; nothing is waiting for them
      assertThat(value(core, "rhumbatron_consumer_lag", "consumer", "q-integration")).isZero();
    }
  }

  @Test
  void aChangeRaisesEventsPublishedAndApplied() throws Exception {
    try (CoreService core = start(Map.of())) {
      double published = value(core, "rhumbatron_events_published_total");
      double projected =
          value(core, "rhumbatron_events_applied_total", "consumer", "project-view-projector");
      double routed = value(core, "rhumbatron_events_applied_total", "consumer", "causal-router");
      Lifecycle lifecycle = core.lifecycle();
      LifecycleSteps.provision(lifecycle, "p-metrics");
      String changeId = oneTaskChange(lifecycle, "p-metrics");
      awaitVerification(lifecycle, changeId);
      await()
          .atMost(WAIT)
          .untilAsserted(
              () -> {
                assertThat(value(core, "rhumbatron_events_published_total"))
                    .isGreaterThanOrEqualTo(published + 5);
                assertThat(
                        value(
                            core,
                            "rhumbatron_events_applied_total",
                            "consumer",
                            "project-view-projector"))
                    .isGreaterThanOrEqualTo(projected + 5);
                assertThat(
                        value(core, "rhumbatron_events_applied_total", "consumer", "causal-router"))
                    .isGreaterThanOrEqualTo(routed + 5);
              });
    }
  }

  @Test
  void theOutboxBacklogGrowsWhileNatsIsStoppedAndDrainsWhenItReturns() throws Exception {
    try (CoreService core = start(Map.of())) {
      Lifecycle lifecycle = core.lifecycle();
      LifecycleSteps.provision(lifecycle, "p-metrics");
      await().atMost(WAIT).until(() -> value(core, "rhumbatron_outbox_backlog") == 0);
      nats.server().stop();
      lifecycle.changes().create("p-metrics", "r1", WorkGraph.of(task("a", "path:a/"))).get();
      await()
          .atMost(WAIT)
          .untilAsserted(
              () -> {
                assertThat(value(core, "rhumbatron_outbox_backlog")).isGreaterThanOrEqualTo(1);
                assertThat(value(core, "rhumbatron_nats_connected")).isZero();
                assertThat(value(core, "rhumbatron_consumer_lag", "consumer", "q-integration"))
                    .isNaN();
              });
      nats.server().restart();
      await().atMost(WAIT).until(() -> value(core, "rhumbatron_outbox_backlog") == 0);
      assertThat(value(core, "rhumbatron_nats_connected")).isEqualTo(1);
    }
  }

  @Test
  void aFailedOutboxRowIsCountedUntilItGoes() throws Exception {
    try (CoreService core = start(Map.of())) {
      assertThat(value(core, "rhumbatron_outbox_failed")).isZero();
      // A row as the publisher leaves one after its last attempt.
      core.database()
          .inTransaction(
              tx ->
                  tx.update(
                      "INSERT INTO outbox (actor_class, actor_id, project_id, event_id, event_type,"
                          + " stream_index, subject, payload, state, attempts, next_attempt_at_ms,"
                          + " last_error, created_at_ms) VALUES ('root', 'p-metrics', 'p-metrics',"
                          + " 'evt_00000000000000000000000000000001', 'project.created', 0,"
                          + " 'events.00', ?, 'failed', 10, 0, 'boom', 0)",
                      new byte[] {'{', '}'}));
      await().atMost(WAIT).until(() -> value(core, "rhumbatron_outbox_failed") == 1);
      assertThat(value(core, "rhumbatron_outbox_backlog")).isZero();
      core.database().inTransaction(tx -> tx.update("DELETE FROM outbox WHERE state = 'failed'"));
      await().atMost(WAIT).until(() -> value(core, "rhumbatron_outbox_failed") == 0);
    }
  }

  @Test
  void aPoisonWakeIsAnOpenDeadLetterUntilDismissed() throws Exception {
    try (CoreService core = start(Map.of())) {
      String[] open = {"kind", DeadLetter.KIND_COMMAND, "queue", "agent-wakeups"};
      assertThat(value(core, "rhumbatron_dead_letters_open", open)).isZero();
      // A wake of a Task nobody knows is rejected: a dead letter at once.
      core.queues().commands().send(wake("cmd_metrics_poison", "chg_none", "t-none", "a-1")).get();
      await().atMost(WAIT).until(() -> value(core, "rhumbatron_dead_letters_open", open) == 1);
      DeadLetter row =
          core.queues().deadLetters().findByCommandId("cmd_metrics_poison").orElseThrow();
      core.queues().deadLetters().dismiss(row.id(), "test");
      await().atMost(WAIT).until(() -> value(core, "rhumbatron_dead_letters_open", open) == 0);
    }
  }

  @Test
  void aStaleWakeIsAFalseWakeup() throws Exception {
    try (CoreService core = start(Map.of())) {
      Lifecycle lifecycle = core.lifecycle();
      LifecycleSteps.provision(lifecycle, "p-metrics");
      String changeId = oneTaskChange(lifecycle, "p-metrics");
      // Points of an earlier run, past the retention horizon: the purge will delete them.
      long old = System.currentTimeMillis() - Duration.ofDays(20).toMillis();
      for (int i = 0; i < 3; i++) {
        int n = i;
        core.database()
            .inTransaction(
                tx ->
                    tx.update(
                        "INSERT INTO platform_metrics (binding, name, value, labels,"
                            + " recorded_at_ms) VALUES ('METRICS', 'false_wakeup', 1, ?, ?)",
                        "{\"n\":\"" + n + "\"}",
                        old));
      }
      assertThat(value(core, "rhumbatron_false_wakeups_total")).isZero();
      // The Task's Agent is another one: the wake is stale.
      core.queues()
          .commands()
          .send(wake("cmd_metrics_stale", changeId, changeId + ":a", "agt_someone_else"))
          .get();
      await().atMost(WAIT).until(() -> value(core, "rhumbatron_false_wakeups_total") == 1);
      // A counter since start does not fall when the purge deletes the old points.
      core.database()
          .inTransaction(
              tx -> tx.update("DELETE FROM platform_metrics WHERE recorded_at_ms < ?", old + 1));
      await()
          .during(CoreMetrics.REFRESH_EVERY.multipliedBy(2))
          .atMost(WAIT)
          .until(() -> value(core, "rhumbatron_false_wakeups_total") == 1);
    }
  }

  @Test
  void aFailingIndexBuildWaitsOnItsQueueAndCountsItsRetries() throws Exception {
    Map<String, String> settings =
        Map.of(
            "indexer.simulated.failure-rate", "1.0",
            "indexer.simulated.duration", "0ms",
            "queues.indexing.retry-delay", "3s");
    try (CoreService core = start(settings)) {
      LifecycleSteps.provision(core.lifecycle(), "p-metrics");
      assertThat(value(core, "rhumbatron_queue_retries_total", "queue", "indexing")).isZero();
      core.queues()
          .commands()
          .send(
              Command.builder()
                  .commandId("cmd_metrics_index")
                  .commandType(CommandType.INDEX_BUILD)
                  .projectId("p-metrics")
                  .createdAt(Instant.parse("2026-06-01T08:00:00Z"))
                  .payload(JsonNodeFactory.instance.objectNode().put("generation", 0))
                  .build())
          .get();
      // Between its retries the command stays on cmd.indexing.
      await()
          .atMost(WAIT)
          .until(() -> value(core, "rhumbatron_queue_depth", "queue", "indexing") == 1);
      await()
          .atMost(WAIT)
          .until(() -> value(core, "rhumbatron_queue_retries_total", "queue", "indexing") == 3);
      await()
          .atMost(WAIT)
          .until(() -> value(core, "rhumbatron_queue_depth", "queue", "indexing") == 0);
      assertThat(value(core, "rhumbatron_queue_retries_total", "queue", "integration")).isZero();
    }
  }

  @Test
  void aHandledCommandCountsOnItsQueue() throws Exception {
    try (CoreService core = start(Map.of())) {
      assertThat(value(core, "rhumbatron_queue_handled_total", "queue", "integration")).isZero();
      // project.provision on the integration queue, handled once.
      LifecycleSteps.provision(core.lifecycle(), "p-handled");
      await()
          .atMost(WAIT)
          .until(() -> value(core, "rhumbatron_queue_handled_total", "queue", "integration") >= 1);
    }
  }

  @Test
  void theArchiversLagGrowsWithEventsAndFallsAtItsSweep() throws Exception {
    long minute = Instant.now().getEpochSecond() / 60;
    String project = offTheSweep("p-lag-", minute);
    int stream = EventStreams.streamIndex(project);
    String[] archiver = {"stream", EventStreams.streamName(stream), "consumer", "audit-archiver"};
    // The catch-up would read a few Events an hour later: only the sweep reads them here.
    try (CoreService core = start(Map.of("router.catch-up-after", "1h"))) {
      Lifecycle lifecycle = core.lifecycle();
      LifecycleSteps.provision(lifecycle, project);
      core.router().sweepTick(sweepOf(stream, minute));
      await().atMost(WAIT).until(() -> value(core, "rhumbatron_consumer_lag", archiver) == 0);
      String changeId = oneTaskChange(lifecycle, project);
      awaitVerification(lifecycle, changeId);
      await().atMost(WAIT).until(() -> value(core, "rhumbatron_consumer_lag", archiver) >= 5);
      core.router().sweepTick(sweepOf(stream, minute));
      await().atMost(WAIT).until(() -> value(core, "rhumbatron_consumer_lag", archiver) == 0);
    }
  }

  /**
   * The age of the archiver's oldest unread Event rises while it waits and falls to 0 when the
   * catch-up reads it, with no sweep tick of its stream; {@code /api/streams} shows the same age.
   */
  @Test
  void theArchiversOldestUnreadAgeRisesThenTheCatchUpReadsIt() throws Exception {
    String project = offTheSweep("p-age-", Instant.now().getEpochSecond() / 60);
    String[] archiver = {
      "stream",
      EventStreams.streamName(EventStreams.streamIndex(project)),
      "consumer",
      "audit-archiver"
    };
    String age = "rhumbatron_consumer_oldest_unread_age_seconds";
    try (CoreService core =
        start(Map.of("router.catch-up-check-every", "200ms", "router.catch-up-after", "4s"))) {
      LifecycleSteps.provision(core.lifecycle(), project);
      await().atMost(WAIT).until(() -> value(core, age, archiver) >= 1);
      await().atMost(WAIT).until(() -> value(core, age, archiver) == 0);
      // The consumer listing behind consumer_lag is cached for 2 s.
      await().atMost(WAIT).until(() -> value(core, "rhumbatron_consumer_lag", archiver) == 0);
      assertThat(core.router().catchUpBatches()).isPositive();
      HttpResponse<String> streams =
          HTTP.send(
              HttpRequest.newBuilder(
                      URI.create("http://127.0.0.1:" + core.httpPort() + "/api/streams"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(streams.body()).contains("\"oldestUnreadAgeSeconds\":0.0");
    }
  }

  /** A project on a stream that the minute ticks of the next minutes do not sweep. */
  private static String offTheSweep(String prefix, long minute) {
    for (int i = 0; ; i++) {
      int stream = EventStreams.streamIndex(prefix + i);
      if ((stream - minute % 8 + 8) % 8 >= 3) {
        return prefix + i;
      }
    }
  }

  /** A minute tick that sweeps {@code stream} with the archiver and nothing else. */
  private static Instant sweepOf(int stream, long fromMinute) {
    for (long m = fromMinute; ; m++) {
      Instant at = Instant.ofEpochSecond(m * 60);
      int minuteOfHour = at.atOffset(ZoneOffset.UTC).getMinute();
      if (m % 8 == stream && minuteOfHour % 5 != 4 && minuteOfHour != 17) {
        return at;
      }
    }
  }

  @Test
  void aChangeOverItsDailyCapCountsDroppedCommands() throws Exception {
    try (CoreService core = start(Map.of("causal.commands-per-change-per-day", "1"))) {
      Lifecycle lifecycle = core.lifecycle();
      LifecycleSteps.provision(lifecycle, "p-metrics");
      assertThat(value(core, "rhumbatron_causal_commands_dropped_total")).isZero();
      // change.created's dispatch is the one command; task a's completion would dispatch b.
      lifecycle
          .changes()
          .create("p-metrics", "r1", WorkGraph.of(task("a", "path:a/"), task("b", "path:b/", "a")))
          .get();
      await()
          .atMost(WAIT)
          .until(() -> value(core, "rhumbatron_causal_commands_dropped_total") >= 1);
    }
  }

  /** Two Changes at once on {@code path:src/} and {@code path:src/api/}: a prefix overlap. */
  private static void overlap(Lifecycle lifecycle) throws Exception {
    LifecycleSteps.provision(lifecycle, "p-metrics");
    lifecycle.changes().create("p-metrics", "z", WorkGraph.of(task("z", "path:src/"))).get();
    lifecycle.changes().create("p-metrics", "x", WorkGraph.of(task("x", "path:src/api/"))).get();
  }

  @Test
  void aPrefixOverlapWithoutAnApiKeyIsAClefFlashDecisionNoApiKey() throws Exception {
    Map<String, String> settings =
        Map.of(
            "agents.simulated.step-delay", "300ms",
            "causal.clef-flash-api-key-env", "RHUMBATRON_TEST_NO_SUCH_KEY");
    try (CoreService core = start(settings)) {
      String[] noKey = {"reason", "no_api_key"};
      assertThat(value(core, "rhumbatron_clef_flash_decisions_total", noKey)).isZero();
      overlap(core.lifecycle());
      await()
          .atMost(WAIT)
          .until(() -> value(core, "rhumbatron_clef_flash_decisions_total", noKey) >= 1);
      assertThat(value(core, "rhumbatron_clef_flash_calls_today")).isZero();
      assertThat(value(core, "rhumbatron_clef_flash_decisions_total", "reason", "model")).isZero();
    }
  }

  @Test
  void aPrefixOverlapAskedOfTheModelIsACallOfTheDay() throws Exception {
    try (LocalMessagesApi api = LocalMessagesApi.start()) {
      api.answerWith(
          request ->
              LocalMessagesApi.Answer.toolUse(
                  AnthropicModelClient.TOOL, "{\"decision\":\"wake\",\"probability\":0.9}"));
      // The key is read from the variable the setting names; PATH is set wherever tests run.
      Map<String, String> settings =
          Map.of(
              "agents.simulated.step-delay", "300ms",
              "causal.clef-flash-api-key-env", "PATH",
              "causal.clef-flash-base-url", api.baseUrl());
      try (CoreService core = start(settings)) {
        assertThat(value(core, "rhumbatron_clef_flash_calls_today")).isZero();
        overlap(core.lifecycle());
        await()
            .atMost(WAIT)
            .untilAsserted(
                () -> {
                  assertThat(value(core, "rhumbatron_clef_flash_calls_today"))
                      .isGreaterThanOrEqualTo(1);
                  assertThat(
                          value(core, "rhumbatron_clef_flash_decisions_total", "reason", "model"))
                      .isGreaterThanOrEqualTo(1);
                });
        assertThat(api.requests()).isGreaterThanOrEqualTo(1);
      }
    }
  }
}
