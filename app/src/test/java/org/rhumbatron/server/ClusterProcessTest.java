package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.app.CoreProcess;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Two cores as child processes on one PostgreSQL database and one nats-server: they share the 9
 * duties; one paused (SIGSTOP) past its lease loses its duties to the other, and resumed (SIGCONT)
 * it steps down with one WARN per duty and takes work again only through the assignment; a clean
 * stop (SIGTERM) hands its duties over within 2 s.
 */
class ClusterProcessTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.postgres();
  @TempDir Path data;

  private static final Pattern HTTP_PORT = Pattern.compile("http port (\\d+)");
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();
  private final List<Process> processes = new ArrayList<>();

  private record Core(String nodeId, Process process, List<String> lines, int port) {}

  @AfterEach
  void stopAll() throws Exception {
    for (Process p : processes) {
      if (p.isAlive()) {
        signal(p, "CONT");
        p.destroyForcibly();
        p.waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  private Core start(String nodeId) throws Exception {
    Path config = data.resolve(nodeId + ".properties");
    Files.writeString(
        config,
        String.join(
            "\n",
            "cluster.node-id=" + nodeId,
            "cluster.heartbeat=1s",
            "cluster.lease=3s",
            "cluster.poll=200ms",
            ""));
    List<String> lines = new CopyOnWriteArrayList<>();
    Process p =
        CoreProcess.launch(
            "core",
            "--nats",
            nats.url(),
            "--data",
            data.resolve(nodeId).toString(),
            "--db",
            database.database().url(),
            "--http",
            "0",
            "--config",
            config.toString());
    processes.add(p);
    CoreProcess.pump(p, lines);
    int[] port = new int[1];
    await()
        .atMost(Duration.ofSeconds(90))
        .until(
            () -> {
              for (String line : lines) {
                Matcher m = HTTP_PORT.matcher(line);
                if (line.contains("core is up") && m.find()) {
                  port[0] = Integer.parseInt(m.group(1));
                  return true;
                }
              }
              assertThat(p.isAlive()).as("%s died: %s", nodeId, lines).isTrue();
              return false;
            });
    return new Core(nodeId, p, lines, port[0]);
  }

  private JsonNode cluster(Core asked) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + asked.port() + "/api/cluster"))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  /** Duty to owner, as {@code asked} reports it. */
  private Map<String, String> owners(Core asked) throws Exception {
    Map<String, String> out = new HashMap<>();
    for (JsonNode d : cluster(asked).path("duties")) {
      out.put(d.path("duty").asText(), d.path("owner").isNull() ? null : d.path("owner").asText());
    }
    return out;
  }

  private Map<String, Long> epochs(Core asked) throws Exception {
    Map<String, Long> out = new HashMap<>();
    for (JsonNode d : cluster(asked).path("duties")) {
      out.put(d.path("duty").asText(), d.path("epoch").asLong());
    }
    return out;
  }

  private double metric(Core c, String name) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + c.port() + "/metrics"))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    return r.body()
        .lines()
        .filter(l -> l.startsWith(name + " ") || l.startsWith(name + "{"))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .findFirst()
        .orElseThrow(() -> new AssertionError(name + " not in /metrics of " + c.nodeId()));
  }

  private static void signal(Process p, String signal) throws Exception {
    new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start().waitFor();
  }

  private static long warnsOfStepDown(Core c, String duty) {
    return c.lines().stream()
        .filter(l -> l.contains("WARN") && l.contains(c.nodeId() + " stops " + duty + ":"))
        .count();
  }

  @Test
  void pausedCoreLosesItsDutiesStepsDownOnceAndAStopHandsOverAtOnce() throws Exception {
    Core a = start("core-a");
    Core b = start("core-b");
    await()
        .atMost(Duration.ofSeconds(20))
        .during(Duration.ofSeconds(1))
        .until(
            () -> {
              Map<String, String> o = owners(b);
              return o.size() == 9
                  && o.values().stream().allMatch(v -> "core-a".equals(v) || "core-b".equals(v))
                  && o.containsValue("core-a")
                  && o.containsValue("core-b");
            });
    JsonNode nodes = cluster(a).path("nodes");
    assertThat(nodes).hasSize(2);
    nodes.forEach(n -> assertThat(n.path("state").asText()).isEqualTo("live"));
    nodes.forEach(n -> assertThat(n.path("address").asText()).startsWith("http://127.0.0.1:"));
    List<String> ofA =
        owners(b).entrySet().stream()
            .filter(e -> "core-a".equals(e.getValue()))
            .map(Map.Entry::getKey)
            .toList();
    Map<String, Long> before = epochs(b);

    signal(a.process(), "STOP");
    long paused = System.nanoTime();
    await()
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> owners(b).values().stream().allMatch("core-b"::equals));
    System.out.printf(
        "ClusterProcessTest: SIGSTOP to takeover %d ms (lease 3 s)%n",
        (System.nanoTime() - paused) / 1_000_000);
    Map<String, Long> taken = epochs(b);
    for (String duty : ofA) {
      assertThat(taken.get(duty)).as(duty).isEqualTo(before.get(duty) + 1);
    }

    signal(a.process(), "CONT");
    // Resumed, it finds its epochs taken and steps down, then the assignment gives its share back.
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> ofA.stream().allMatch(d -> warnsOfStepDown(a, d) >= 1));
    await()
        .atMost(Duration.ofSeconds(20))
        .during(Duration.ofSeconds(1))
        .until(
            () ->
                owners(b).entrySet().stream()
                    .filter(e -> ofA.contains(e.getKey()))
                    .allMatch(e -> "core-a".equals(e.getValue())));
    for (String duty : ofA) {
      assertThat(warnsOfStepDown(a, duty)).as("one WARN for " + duty).isEqualTo(1);
    }

    assertThat(metric(a, "rhumbatron_cluster_fenced_writes_total")).isNotNegative();
    assertThat(metric(b, "rhumbatron_cluster_ownership_changes_total"))
        .as("b took a's duties and handed them back")
        .isGreaterThanOrEqualTo(2.0 * ofA.size());

    a.process().destroy(); // SIGTERM: a clean stop
    long stopped = System.nanoTime();
    await()
        .atMost(Duration.ofSeconds(2))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> owners(b).values().stream().allMatch("core-b"::equals));
    System.out.printf(
        "ClusterProcessTest: SIGTERM to takeover %d ms%n",
        (System.nanoTime() - stopped) / 1_000_000);
    assertThat(a.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(cluster(b).path("nodes").findValuesAsText("state")).contains("stopped", "live");
  }
}
