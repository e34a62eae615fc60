package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.natsserver.PrivateNatsServer;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.testkit.SettableClock;

/**
 * {@code rhumbatron demo} as a child process with a small workload: it runs to completion, and
 * every count of its JSON summary equals the database's (its SQLite file) and the streams' (its
 * private nats-server's store, started again afterwards).
 */
class DemoCommandTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path data;

  @Test
  void aSmallDemoCompletesAndItsSummaryCountsAreTheDatabasesAndTheStreams() throws Exception {
    Path stderr = data.resolve("demo.stderr");
    Path dir = data.resolve("demo");
    Process demo =
        new ProcessBuilder(
                CoreProcess.command("demo", "--changes", "4", "--data", dir.toString(), "--json"))
            .redirectError(stderr.toFile())
            .start();
    byte[] stdout;
    try {
      stdout = demo.getInputStream().readAllBytes();
      assertThat(demo.waitFor(90, TimeUnit.SECONDS)).as("the demo ends").isTrue();
    } finally {
      demo.destroyForcibly();
    }
    String err = Files.readString(stderr);
    assertThat(demo.exitValue()).as("stderr: %s", err).isZero();
    assertThat(err).contains("dashboard http://127.0.0.1:").contains("4/4 Changes completed");
    JsonNode summary = JSON.readTree(stdout);

    assertThat(summary.path("changes").path("requested").asInt()).isEqualTo(4);
    assertThat(summary.path("changes").path("created").asInt()).isEqualTo(4);
    assertThat(summary.path("quiet").asBoolean()).isTrue();
    assertThat(summary.path("approval").asText()).isEqualTo(DemoSummary.OPERATOR);
    assertThat(summary.path("dashboard").asText()).matches("http://127\\.0\\.0\\.1:\\d+/");

    try (Database db = Database.open(dir.resolve("rhumbatron.db").toString())) {
      Map<String, Long> byState = new LinkedHashMap<>();
      db.read(
          tx ->
              tx.query(
                  "SELECT state, COUNT(*) FROM changes GROUP BY state",
                  rs -> byState.put(rs.getString(1), rs.getLong(2))));
      assertThat(byState).containsExactly(Map.entry("completed", 4L));
      Map<String, Long> summarized = new LinkedHashMap<>();
      summary
          .path("changes")
          .path("by_state")
          .fields()
          .forEachRemaining(e -> summarized.put(e.getKey(), e.getValue().asLong()));
      assertThat(summarized).isEqualTo(byState);

      long events = count(db, "SELECT COUNT(*) FROM outbox");
      assertThat(events).isPositive();
      assertThat(summary.path("events").asLong()).isEqualTo(events);
      assertThat(summary.path("dead_letters").asLong())
          .isEqualTo(count(db, "SELECT COUNT(*) FROM dead_letters"));
      long wakeups = count(db, "SELECT COUNT(*) FROM outbox WHERE event_type = 'agent.woken'");
      assertThat(wakeups).isPositive();
      JsonNode wakes = summary.path("wakes");
      assertThat(wakes.path("reached_agent").asLong()).isEqualTo(wakeups);
      long stale =
          count(
              db,
              "SELECT COUNT(*) FROM platform_metrics"
                  + " WHERE name IN ('false_wakeup', 'repeat_wakeup')");
      assertThat(wakes.path("stale").asLong()).isEqualTo(stale);
      assertThat(wakes.path("total").asLong()).isEqualTo(wakeups + stale);
      long byReason = 0;
      for (JsonNode n : wakes.path("stale_by_reason")) {
        byReason += n.asLong();
      }
      assertThat(byReason).isEqualTo(stale);
      assertThat(summary.path("approvals").path("promoted").asLong())
          .as("every promotion is the operator's approval")
          .isEqualTo(count(db, "SELECT COUNT(*) FROM promotions"))
          .isEqualTo(4);

      long[] latencies =
          db
              .read(
                  tx ->
                      tx.query(
                          "SELECT p.processed_at_ms - o.created_at_ms FROM outbox o JOIN"
                              + " processed_events p ON p.event_id = o.event_id"
                              + " WHERE p.consumer = 'project-view-projector'",
                          rs -> rs.getLong(1)))
              .stream()
              .mapToLong(Long::longValue)
              .sorted()
              .toArray();
      JsonNode latency = summary.path("publish_to_applied_ms");
      assertThat(latency.path("samples").asLong()).isEqualTo(latencies.length).isEqualTo(events);
      assertThat(latency.path("p50").asLong()).isEqualTo(LatencyStats.percentile(latencies, 50));
      assertThat(latency.path("p99").asLong()).isEqualTo(LatencyStats.percentile(latencies, 99));
    }

    // The demo's nats-server stopped with it; started again on its store, the streams say what
    // they stored.
    try (PrivateNatsServer server = PrivateNatsServer.start(dir, 0);
        Connection nats = Nats.connect(server.url())) {
      JetStreamManagement jsm = nats.jetStreamManagement();
      assertThat(summary.path("commands").asLong())
          .isPositive()
          .isEqualTo(jsm.getStreamInfo(Queue.STREAM_NAME).getStreamState().getLastSequence());
      long stored = 0;
      for (int s = 0; s < EventStreams.STREAM_COUNT; s++) {
        stored += jsm.getStreamInfo(EventStreams.streamName(s)).getStreamState().getLastSequence();
      }
      assertThat(stored).as("each Event stored once").isEqualTo(summary.path("events").asLong());
    }
  }

  @Test
  void aDataDirectoryOfAnEarlierRunIsRefusedInOneLine() throws Exception {
    Files.writeString(data.resolve("rhumbatron.db"), "");
    assertThat(Main.run("demo", "--data", data.toString())).isEqualTo(2);
  }

  @Test
  void withoutATerminalProgressIsAPlainLineEveryFewSeconds() {
    SettableClock clock = new SettableClock();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DemoProgress progress =
        new DemoProgress(new PrintStream(bytes, true, StandardCharsets.UTF_8), clock, false);
    progress.update(new DemoProgress.Counts(0, 0, 10, 5, 2));
    clock.advance(Duration.ofSeconds(1));
    progress.update(new DemoProgress.Counts(1, 1, 10, 50, 20)); // too soon: not shown
    clock.advance(DemoProgress.LINE_EVERY);
    progress.update(new DemoProgress.Counts(2, 3, 10, 90, 40));
    assertThat(bytes.toString(StandardCharsets.UTF_8).lines().toList())
        .isEqualTo(
            List.of(
                "rhumbatron demo: 0/10 Changes completed, 5 Events, 2 Commands, 0 s",
                "rhumbatron demo: 2/10 Changes completed (1 ended otherwise), 90 Events,"
                    + " 40 Commands, 6 s"));
  }

  private static long count(Database db, String sql) {
    return db.read(tx -> tx.queryLong(sql));
  }
}
