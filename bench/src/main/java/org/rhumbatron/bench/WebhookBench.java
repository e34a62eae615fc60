package org.rhumbatron.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.LifecycleIds;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.server.CoreConfig;
import org.rhumbatron.server.CoreService;
import org.rhumbatron.workload.LatencyStats;
import org.rhumbatron.workload.LifecycleWorkload;

/**
 * The wake path to Agents outside core: a core of its own with {@code agents.runtime=webhook}
 * pointing at a local HTTP server that acts as the Agents. Each Agent answers its {@code start}
 * webhook with 200 and then runs its Task in process (running, changeset, completed), as an Agent
 * reporting through the API would.
 *
 * <p>Two phases. <b>Slow agents</b>: each round wakes {@code agents} Agents at once ({@code agents}
 * / 5 Changes of 5 independent Tasks; a Change holds at most 8 Agents), of which {@code slow}
 * answer their webhook only after {@code slowAnswer} (inside the webhook timeout); the next round
 * starts once those answered. It reports {@code task.ready} to the webhook call for the other
 * Agents and for the slow ones. <b>Light load</b>: one Change of one Task at a time, each after the
 * last one's webhook call: {@code task.ready} to the webhook call.
 *
 * <p>Like {@link LifecycleBench}, on a server that is not the bench's own it refuses a COMMANDS
 * stream or event streams that hold messages or consumers, and clears them afterwards.
 */
final class WebhookBench {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int TASKS_PER_CHANGE = 5;
  private static final Duration CALL_WAIT = Duration.ofSeconds(60);
  private static final long POLL_MILLIS = 5;

  private final String natsUrl;
  private final Path dataDir;
  private final String dbUrl;
  private final int agents;
  private final int slow;
  private final Duration slowAnswer;
  private final int rounds;
  private final int lightWakes;
  private final boolean ownServer;
  private final EnvelopeCodec codec = new EnvelopeCodec();
  private final String runId = Long.toString(Clock.systemUTC().millis(), 36);
  private final Clock clock = Clock.systemUTC();

  /** Webhook calls by {@code taskId}: when the call reached the Agent (epoch ms). */
  private final Map<String, Long> calls = new ConcurrentHashMap<>();

  /** The Agents that answer after {@link #slowAnswer}. */
  private final Set<String> slowAgents = ConcurrentHashMap.newKeySet();

  private final Set<String> slowAnswered = ConcurrentHashMap.newKeySet();

  WebhookBench(
      String natsUrl,
      Path dataDir,
      String dbUrl,
      int agents,
      int slow,
      Duration slowAnswer,
      int rounds,
      int lightWakes,
      boolean ownServer) {
    if (agents % TASKS_PER_CHANGE != 0) {
      throw new IllegalArgumentException(
          "--agents must be a multiple of " + TASKS_PER_CHANGE + ", was " + agents);
    }
    if (slow < 0 || slow > agents / TASKS_PER_CHANGE) {
      throw new IllegalArgumentException(
          "--slow must be between 0 and --agents / " + TASKS_PER_CHANGE + ", was " + slow);
    }
    this.natsUrl = natsUrl;
    this.dataDir = dataDir;
    this.dbUrl = dbUrl;
    this.agents = agents;
    this.slow = slow;
    this.slowAnswer = slowAnswer;
    this.rounds = rounds;
    this.lightWakes = lightWakes;
    this.ownServer = ownServer;
  }

  String run() throws Exception {
    ExecutorService answering = Executors.newCachedThreadPool(DaemonThreads.named("bench-agent"));
    com.sun.net.httpserver.HttpServer agentsServer =
        com.sun.net.httpserver.HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    agentsServer.setExecutor(answering);
    List<Lifecycle> core = new ArrayList<>(1);
    agentsServer.createContext("/", exchange -> answer(exchange, core));
    agentsServer.start();
    String url = "http://127.0.0.1:" + agentsServer.getAddress().getPort() + "/agents";
    Settings settings =
        Settings.defaults()
            .with(
                Map.of(
                    Settings.AGENT_RUNTIME.key(), "webhook",
                    Settings.AGENT_WEBHOOK_URL.key(), url,
                    Settings.SIMULATED_VERIFIER_DURATION.key(), "0ms",
                    Settings.SIMULATED_RELEASE_DURATION.key(), "0ms"));
    try (Connection nats = JetStreamConnections.connect(natsUrl, "rhumbatron-bench-webhook")) {
      JetStreamManagement jsm = nats.jetStreamManagement();
      if (!ownServer) {
        BenchStreams.refuseBusyServer(jsm);
      }
      new JetStreamTopology(nats, settings).ensure();
      BenchStreams.clear(jsm);
      try (CoreService service =
          CoreService.start(new CoreConfig(natsUrl, dataDir, dbUrl, 0, settings))) {
        core.add(service.lifecycle());
        return measure(service.lifecycle(), service.coordinator().database(), settings);
      } finally {
        BenchStreams.clear(jsm);
      }
    } finally {
      agentsServer.stop(0);
      answering.shutdownNow();
    }
  }

  private String measure(Lifecycle lifecycle, Database db, Settings settings) throws Exception {
    String project = "p-bench-wh-" + runId;
    LifecycleWorkload.provisionWithLiveApps(
        lifecycle, List.of(project), "tenant-bench", db.clock(), Duration.ofSeconds(30));

    // Warm-up: a light-load pass that is not measured (the JIT, the first connections).
    light(lifecycle, project, "w", Math.min(lightWakes, 10));
    List<Long> fast = new ArrayList<>();
    List<Long> slowSamples = new ArrayList<>();
    for (int r = 1; r <= rounds; r++) {
      round(lifecycle, db, project, "r" + r, fast, slowSamples);
    }
    light(lifecycle, project, "l", lightWakes);
    Map<String, Long> ready = readyAt(db, project);
    List<Long> light = new ArrayList<>();
    for (String taskId : lightIds(project, "l", lightWakes)) {
      light.add(calls.get(taskId) - ready.get(taskId));
    }

    ObjectNode out = JSON.createObjectNode();
    out.put("bench", "webhook");
    out.put("database", db.dialect().name());
    out.put("nats", natsUrl);
    out.put("agents_per_round", agents);
    out.put("slow_agents_per_round", slow);
    out.put("slow_answer_ms", slowAnswer.toMillis());
    out.put("webhook_timeout_ms", settings.get(Settings.AGENT_WEBHOOK_TIMEOUT).toMillis());
    out.put("rounds", rounds);
    LatencyStats.put(out.putObject("ready_to_webhook_other_agents_ms"), nanos(fast), 50, 99);
    LatencyStats.put(out.putObject("ready_to_webhook_slow_agents_ms"), nanos(slowSamples), 50, 99);
    LatencyStats.put(out.putObject("light_load_ready_to_webhook_ms"), nanos(light), 50, 99);
    out.put("cores", Runtime.getRuntime().availableProcessors());
    return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(out);
  }

  /**
   * One round: {@code agents} Tasks made ready at once, the first Task of the first {@code slow}
   * Changes with a slow Agent; waits for every webhook call and for the slow answers.
   */
  private void round(
      Lifecycle lifecycle,
      Database db,
      String project,
      String round,
      List<Long> fast,
      List<Long> slowSamples)
      throws Exception {
    int changes = agents / TASKS_PER_CHANGE;
    List<String> taskIds = new ArrayList<>();
    Set<String> slowTasks = new java.util.HashSet<>();
    for (int c = 0; c < changes; c++) {
      String changeId = LifecycleIds.changeId(project, "bench-" + round + "-c" + c);
      for (int t = 1; t <= TASKS_PER_CHANGE; t++) {
        String taskId = LifecycleIds.taskId(changeId, "t" + t);
        taskIds.add(taskId);
        if (c < slow && t == 1) {
          slowTasks.add(taskId);
          slowAgents.add(LifecycleIds.agentId(taskId, 1));
        }
      }
    }
    List<TaskSpec> specs = new ArrayList<>();
    for (int t = 1; t <= TASKS_PER_CHANGE; t++) {
      specs.add(new TaskSpec("t" + t, "task " + t, List.of(), List.of("path:src/t" + t + "/")));
    }
    WorkGraph graph = new WorkGraph(specs);
    for (int c = 0; c < changes; c++) {
      lifecycle.changes().create(project, "bench-" + round + "-c" + c, graph).get();
    }
    awaitCalls(taskIds);
    long deadline = System.nanoTime() + CALL_WAIT.toNanos();
    while (!slowAnswered.containsAll(slowTasks)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("slow agents did not answer within " + CALL_WAIT);
      }
      Thread.sleep(POLL_MILLIS);
    }
    Map<String, Long> ready = readyAt(db, project);
    for (String taskId : taskIds) {
      long sample = calls.get(taskId) - ready.get(taskId);
      (slowTasks.contains(taskId) ? slowSamples : fast).add(sample);
    }
  }

  /** One Change of one Task at a time, each once the last one's webhook call came. */
  private void light(Lifecycle lifecycle, String project, String tag, int n) throws Exception {
    List<String> ids = lightIds(project, tag, n);
    WorkGraph one = WorkGraph.of(new TaskSpec("t1", "task", List.of(), List.of("path:src/l/")));
    for (int i = 0; i < n; i++) {
      lifecycle.changes().create(project, "bench-light-" + tag + i, one).get();
      awaitCalls(List.of(ids.get(i)));
    }
  }

  private static List<String> lightIds(String project, String tag, int n) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ids.add(LifecycleIds.taskId(LifecycleIds.changeId(project, "bench-light-" + tag + i), "t1"));
    }
    return ids;
  }

  private void awaitCalls(List<String> taskIds) throws InterruptedException {
    long deadline = System.nanoTime() + CALL_WAIT.toNanos();
    while (!calls.keySet().containsAll(taskIds)) {
      if (System.nanoTime() > deadline) {
        List<String> missing = new ArrayList<>(taskIds);
        missing.removeAll(calls.keySet());
        throw new IllegalStateException(
            "no webhook call within " + CALL_WAIT + " for tasks " + missing);
      }
      Thread.sleep(POLL_MILLIS);
    }
  }

  /** When each Task of {@code project} was first made ready: its task.ready's commit time. */
  private Map<String, Long> readyAt(Database db, String project) {
    Map<String, Long> at = new HashMap<>();
    db.read(
        tx ->
            tx.query(
                "SELECT created_at_ms, payload FROM outbox WHERE project_id = ?"
                    + " AND event_type = ?",
                rs -> {
                  Event e = codec.decodeEvent(rs.getBytes(2));
                  return at.merge(e.taskId(), rs.getLong(1), Math::min);
                },
                project,
                EventType.TASK_READY.wireName()));
    return at;
  }

  /**
   * An Agent: notes when the webhook reached it, answers (a slow one after {@link #slowAnswer}),
   * then runs a started Task to completed in process.
   */
  private void answer(HttpExchange exchange, List<Lifecycle> core) throws IOException {
    long now = clock.millis();
    JsonNode body;
    try (InputStream in = exchange.getRequestBody()) {
      body = JSON.readTree(in);
    }
    String kind = body.path("kind").asText();
    String taskId = body.path("taskId").asText();
    String agentId = body.path("agentId").asText();
    boolean start = "start".equals(kind) && body.path("attempt").asInt() == 1;
    if (start) {
      calls.putIfAbsent(taskId, now);
    }
    if (start && slowAgents.contains(agentId)) {
      try {
        Thread.sleep(slowAnswer.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      slowAnswered.add(taskId);
    }
    exchange.sendResponseHeaders(200, -1);
    exchange.close();
    if (start && !core.isEmpty()) {
      TaskRef ref =
          new TaskRef(
              body.path("projectId").asText(),
              body.path("changeId").asText(),
              taskId,
              agentId,
              body.path("attempt").asInt());
      Lifecycle lifecycle = core.get(0);
      lifecycle
          .agents()
          .start(ref)
          .thenCompose(v -> lifecycle.agents().proposeChangeset(ref))
          .thenCompose(v -> lifecycle.agents().complete(ref))
          .orTimeout(CALL_WAIT.toMillis(), TimeUnit.MILLISECONDS)
          .exceptionally(e -> null); // a repeat or a Change that ended: nothing to measure
    }
  }

  private static long[] nanos(List<Long> millis) {
    return millis.stream().mapToLong(ms -> ms * 1_000_000L).toArray();
  }
}
