package org.rhumbatron.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.app.CoreProcess;
import org.rhumbatron.app.Main;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.natsserver.PrivateNatsServer;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.tls.TestCertificates;

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
    assertThat(summary.path("dashboard").isNull())
        .as("core stopped with the demo: no link to a dead page")
        .isTrue();

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
      // The percentile arithmetic has literal vectors in DemoSummaryTest; here each figure is a
      // sample the database holds, to the histogram's precision: the top of the sample's bucket,
      // at most 1/1024 above it (exact below 2048 ms).
      long p50 = latency.path("p50").asLong();
      long p99 = latency.path("p99").asLong();
      List<Long> samples = Arrays.stream(latencies).boxed().toList();
      assertThat(samples).anySatisfy(l -> assertThat(p50).isBetween(l, l + l / 1024));
      assertThat(samples).anySatisfy(l -> assertThat(p99).isBetween(l, l + l / 1024));
      assertThat(p50).isLessThanOrEqualTo(p99);
      long max = latencies[latencies.length - 1];
      assertThat(latency.path("max").asLong()).isBetween(max, max + max / 1024);
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
  void withoutDataTheDemoDeletesItsTemporaryDirectoryAndSaysTheDashboardIsGone() throws Exception {
    Path tmp = Files.createDirectories(data.resolve("tmp"));
    Demo demo = Demo.start(tmp, "demo", "--changes", "1");
    assertThat(demo.waitFor()).as("exit code; output: %s", demo.lines).isZero();

    Path dir = demo.dataDir();
    assertThat(dir).as("the temporary directory it used").startsWithRaw(tmp);
    assertThat(dir).as("deleted at the end").doesNotExist();
    try (Stream<Path> left = Files.list(tmp)) {
      assertThat(left.map(p -> p.getFileName().toString()))
          .noneMatch(n -> n.startsWith("rhumbatron-demo-"));
    }
    String summary = String.join("\n", demo.lines);
    assertThat(summary).contains("rhumbatron demo summary").contains(DemoCommand.DASHBOARD_GONE);
  }

  @Test
  void onPostgresTheDemoRunsInAFreshDatabaseAndDropsIt() throws Exception {
    Path dir = data.resolve("demo-pg");
    Set<String> before = demoDatabases();
    Demo demo =
        Demo.start(null, "demo", "--db", "postgres", "--changes", "1", "--data", dir.toString());
    assertThat(demo.waitFor()).as("exit code; output: %s", demo.lines).isZero();

    String name =
        demo.lines.stream()
            .map(DATABASE_LINE::matcher)
            .filter(Matcher::find)
            .map(m -> m.group(1))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no database line in " + demo.lines));
    assertThat(String.join("\n", demo.lines)).contains("1/1 Changes completed");
    assertThat(dir.resolve("rhumbatron.db")).as("not SQLite").doesNotExist();
    assertThat(Files.readString(dir.resolve("core.log"))).contains(name);
    assertThat(demoDatabases()).as("%s dropped", name).doesNotContain(name).isEqualTo(before);
  }

  @Test
  void aDemoThatKeepsRunningPrintsItsOwnTokenAndWritesWithItWork() throws Exception {
    Path tmp = Files.createDirectories(data.resolve("tmp"));
    Demo demo = Demo.start(tmp, "demo", "--changes", "1", "--keep-running");
    try {
      Matcher running = demo.awaitLine(KEEPS_RUNNING, Duration.ofSeconds(120));
      String url = running.group(1);
      String token = running.group(2);
      assertThat(token).matches("[0-9a-f]{" + 2 * DemoCommand.TOKEN_BYTES + "}");
      assertThat(demo.lines)
          .as("the summary links the dashboard that is still up")
          .anyMatch(l -> l.matches("\\s*dashboard\\s+" + Pattern.quote(url)));

      HttpClient http = HttpClient.newHttpClient();
      String body = "{\"projectId\":\"tok-p1\",\"tenantId\":\"t\",\"name\":\"tok-p1\"}";
      HttpResponse<String> withToken =
          http.send(
              HttpRequest.newBuilder(URI.create(url + "api/projects"))
                  .header("Authorization", "Bearer " + token)
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString(body))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(withToken.statusCode()).as(withToken.body()).isBetween(200, 299);
      HttpResponse<String> withoutToken =
          http.send(
              HttpRequest.newBuilder(URI.create(url + "api/projects"))
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString(body))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(withoutToken.statusCode()).isEqualTo(401);
    } finally {
      demo.process.destroy();
      demo.process.waitFor(60, TimeUnit.SECONDS);
      demo.process.destroyForcibly();
    }
    assertThat(demo.dataDir()).as("kept for the running core").exists();
  }

  private static final Pattern DATABASE_LINE =
      Pattern.compile("rhumbatron demo: database (rhumbatron_demo_[0-9a-z_]+) on ");
  private static final Pattern KEEPS_RUNNING =
      Pattern.compile(
          "core keeps running, dashboard (http://127\\.0\\.0\\.1:\\d+/), API token (\\S+);");
  private static final Pattern DATA_LINE = Pattern.compile("rhumbatron demo: data in (\\S+?),? ");

  /** A demo child process, its stdout and stderr as lines, and its own temporary directory. */
  private record Demo(Process process, List<String> lines, BlockingQueue<String> fresh) {
    static Demo start(Path tmp, String... args) throws IOException {
      List<String> command = new ArrayList<>(CoreProcess.command(args));
      if (tmp != null) {
        command.add(1, "-Djava.io.tmpdir=" + tmp);
      }
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      Demo demo = new Demo(p, new CopyOnWriteArrayList<>(), new LinkedBlockingQueue<>());
      Thread reader =
          new Thread(
              () -> {
                try (BufferedReader r =
                    new BufferedReader(
                        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                  String line;
                  while ((line = r.readLine()) != null) {
                    demo.lines.add(line);
                    demo.fresh.add(line);
                  }
                } catch (IOException ignored) {
                  // the process ended
                }
              });
      reader.setDaemon(true);
      reader.start();
      return demo;
    }

    int waitFor() throws InterruptedException {
      try {
        assertThat(process.waitFor(180, TimeUnit.SECONDS)).as("the demo ends").isTrue();
      } finally {
        process.destroyForcibly();
      }
      return process.exitValue();
    }

    Matcher awaitLine(Pattern pattern, Duration within) throws InterruptedException {
      long deadline = System.nanoTime() + within.toNanos();
      while (true) {
        String line = fresh.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        if (line == null) {
          throw new AssertionError("no line like " + pattern + " in " + lines);
        }
        Matcher m = pattern.matcher(line);
        if (m.find()) {
          return m;
        }
      }
    }

    Path dataDir() {
      return lines.stream()
          .map(DATA_LINE::matcher)
          .filter(Matcher::find)
          .map(m -> Path.of(m.group(1)))
          .findFirst()
          .orElseThrow(() -> new AssertionError("no data line in " + lines));
    }
  }

  private static Set<String> demoDatabases() throws Exception {
    Set<String> names = new TreeSet<>();
    try (java.sql.Connection c =
            java.sql.DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres");
        java.sql.ResultSet rs =
            c.createStatement()
                .executeQuery(
                    "SELECT datname FROM pg_database WHERE datname LIKE 'rhumbatron_demo_%'")) {
      while (rs.next()) {
        names.add(rs.getString(1));
      }
    }
    return names;
  }

  @Test
  void onThreeCoresOneIsKilledHalfWayItsDutiesMoveAndEveryChangeEnds() throws Exception {
    Path dir = data.resolve("demo-cores");
    // Short leases, so that the killed core's duties move within seconds.
    Path config =
        Files.writeString(
            data.resolve("cores.properties"), "cluster.lease=3s\ncluster.heartbeat=1s\n");
    Demo demo =
        Demo.start(
            null,
            "demo",
            "--cores",
            "3",
            "--db",
            "postgres",
            "--changes",
            "6",
            "--config",
            config.toString(),
            "--data",
            dir.toString());
    assertThat(demo.waitFor()).as("exit code; output: %s", demo.lines).isZero();

    String out = String.join("\n", demo.lines);
    assertThat(out)
        .contains("6 created of 6: 6 completed")
        .containsPattern("cores +3; demo-core-\\d-\\w+ SIGKILLed half way")
        .containsPattern("duties moved +\\d+\\.\\d s after the kill")
        // A run of six Changes may end before the killed core's batches come back.
        .containsPattern("in-flight handled +(\\d+\\.\\d s after the kill|NOT by the run's end)")
        .containsPattern("every Change ended +yes");
    assertThat(dir.resolve("core-2.log")).exists();
    assertThat(dir.resolve("core-3.log")).exists();
  }

  @Test
  void overTlsTheDemoTrustsTheCaOfCacertAndSaysSoWithoutIt() throws Exception {
    TestCertificates certs =
        TestCertificates.create(Files.createDirectories(data.resolve("tls")), "IP:127.0.0.1");
    Path config =
        Files.writeString(
            data.resolve("tls.properties"),
            "http.tls.cert=" + certs.serverChain() + "\nhttp.tls.key=" + certs.serverKey() + "\n");
    List<String> oneChange =
        List.of("demo", "--changes", "1", "--config", config.toString(), "--data");
    Demo untrusted = demo(oneChange, data.resolve("untrusted").toString());
    assertThat(untrusted.waitFor()).as("exit code; output: %s", untrusted.lines).isNotZero();
    assertThat(String.join("\n", untrusted.lines)).contains("--cacert FILE");

    Demo demo =
        demo(oneChange, data.resolve("trusted").toString(), "--cacert", certs.caCert().toString());
    assertThat(demo.waitFor()).as("exit code; output: %s", demo.lines).isZero();
    assertThat(String.join("\n", demo.lines))
        .contains("dashboard https://127.0.0.1:")
        .contains("1/1 Changes completed");
  }

  /** A demo of {@code args} and then {@code more}, as a child process. */
  private static Demo demo(List<String> args, String... more) throws IOException {
    List<String> all = new ArrayList<>(args);
    all.addAll(List.of(more));
    return Demo.start(null, all.toArray(String[]::new));
  }

  @Test
  void severalCoresOnSqliteAreRefusedInOneLine() {
    assertThat(Main.run("demo", "--cores", "2", "--data", data.resolve("x").toString()))
        .isEqualTo(2);
    assertThatThrownBy(() -> DemoCommand.checkCores(2, "sqlite"))
        .hasMessageContaining("--cores 2 needs --db postgres");
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
