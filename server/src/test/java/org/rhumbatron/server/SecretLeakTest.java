package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.server.ApiClient.Answer;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServer;
import org.slf4j.LoggerFactory;

/**
 * Core started with known secrets (the API token, a NATS token, a database password, a webhook
 * secret, and the task tokens and signing keys it makes itself) and driven through its errors: a
 * wrong API token, a webhook that fails before it answers, forged and ended task tokens, NATS
 * killed and back, a start with a wrong NATS token, settings that conflict. Then every output is
 * searched for each secret: every log event at DEBUG with its stack, stdout and stderr, every
 * answer's body, {@code /metrics}, the dashboard and every read it makes, the thrown exceptions'
 * messages.
 */
class SecretLeakTest {
  static final String API_TOKEN = "leak-api-token-Rw82pLx";
  static final String NATS_TOKEN = "leak-nats-token-Jk47sQd";
  static final String DB_PASSWORD = "leak-db-password-Vn63tBe";

  @RegisterExtension final DatabaseExtension db = DatabaseExtension.postgres();
  @TempDir Path dir;

  final List<String> outputs = new CopyOnWriteArrayList<>();
  final List<String> secrets =
      new CopyOnWriteArrayList<>(List.of(API_TOKEN, NATS_TOKEN, DB_PASSWORD));

  /** A webhook Agent: each wake first fails, then is taken; it reports with its task token. */
  final class LeakAgent implements AutoCloseable {
    final LocalAgent endpoint;
    final Map<String, Integer> posts = new ConcurrentHashMap<>();
    final Map<String, JsonNode> started = new ConcurrentHashMap<>();

    LeakAgent() throws IOException {
      endpoint = new LocalAgent(this::wake);
    }

    String url() {
      return endpoint.url();
    }

    private void wake(HttpExchange exchange) throws IOException {
      JsonNode task = ApiClient.JSON.readTree(exchange.getRequestBody());
      String key = task.path("taskId").asText() + "#" + task.path("kind").asText();
      if (posts.merge(key, 1, Integer::sum) == 1) {
        exchange.sendResponseHeaders(500, -1); // core logs the failed wake and retries it
      } else {
        exchange.sendResponseHeaders(202, -1);
        if (task.hasNonNull("taskToken")) {
          secrets.add(task.path("taskToken").asText());
          started.put(task.path("taskId").asText(), task);
        }
      }
      exchange.close();
    }

    @Override
    public void close() {
      endpoint.close();
    }
  }

  @Test
  void noSecretShowsInAnyOutput() throws Exception {
    ListAppender<ILoggingEvent> logs = new ListAppender<>();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    Level level = root.getLevel();
    PrintStream out = System.out;
    PrintStream err = System.err;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    logs.start();
    root.addAppender(logs);
    root.setLevel(Level.DEBUG);
    System.setOut(new PrintStream(new Tee(out, printed), true));
    System.setErr(new PrintStream(new Tee(err, printed), true));
    try (LeakAgent agent = new LeakAgent()) {
      drive(agent);
    } finally {
      root.detachAppender(logs);
      root.setLevel(level);
      System.setOut(out);
      System.setErr(err);
    }
    for (ILoggingEvent e : logs.list) {
      outputs.add(
          e.getLoggerName()
              + " "
              + e.getFormattedMessage()
              + (e.getThrowableProxy() == null
                  ? ""
                  : " " + ThrowableProxyUtil.asString(e.getThrowableProxy())));
    }
    outputs.add(printed.toString(StandardCharsets.UTF_8));
    assertThat(logs.list).hasSizeGreaterThan(20);
    assertThat(secrets).hasSizeGreaterThan(5);
    List<String> found = new ArrayList<>();
    for (String secret : secrets) {
      for (String output : outputs) {
        if (output.contains(secret)) {
          found.add(secret + " in: " + excerpt(output, secret));
        }
      }
    }
    System.out.printf(
        "secret leak: %d secrets searched in %d outputs (%d log events)%n",
        secrets.size(), outputs.size(), logs.list.size());
    assertThat(found).isEmpty();
  }

  private void drive(LeakAgent agent) throws Exception {
    int port = NatsServer.freePort();
    Process nats = startNats(port);
    Settings settings =
        Settings.defaults()
            .with(
                Map.of(
                    "api.token",
                    API_TOKEN,
                    "nats.token",
                    NATS_TOKEN,
                    "database.password",
                    DB_PASSWORD,
                    "agents.runtime",
                    "webhook",
                    "agents.webhook.url",
                    agent.url(),
                    "queues.agent-wakeups.retry-delay",
                    "200ms",
                    "verifier.simulated.duration",
                    "0ms",
                    "release.simulated.duration",
                    "0ms"));
    String natsUrl = "nats://127.0.0.1:" + port;
    try (CoreService core =
        CoreService.start(
            new CoreConfig(natsUrl, dir.resolve("d"), db.database().url(), 0, settings))) {
      ApiClient api = ApiClient.of(core, API_TOKEN);
      Answer secret = seen(api.post("/api/webhooks/secrets", Map.of()));
      String whsec = secret.body().path("secret").asText();
      secrets.add(whsec);
      secrets.add(whsec.substring("whsec_".length()));
      outputs.remove(outputs.size() - 1); // the one answer that shows it, on purpose

      seen(api.withToken(API_TOKEN + "x").post("/api/projects", Map.of()));
      seen(api.withToken(null).post("/api/projects", Map.of()));
      seen(api.post("/api/projects", "{\"projectId\":"));
      seen(api.post("/api/projects", Map.of("projectId", "p-leak", "tenantId", "t", "name", "L")));
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> api.get("/api/projects/p-leak").status() == 200);
      Answer created =
          seen(
              api.post(
                  "/api/projects/p-leak/changes",
                  Map.of(
                      "clientRequestId",
                      "r1",
                      "tasks",
                      List.of(Map.of("key", "a", "resourceScopes", List.of("path:a/"))))));
      String changeId = created.body().path("changeId").asText();
      await().atMost(Duration.ofSeconds(30)).until(() -> !agent.started.isEmpty());
      JsonNode task = agent.started.values().iterator().next();
      String token = task.path("taskToken").asText();
      ApiClient asAgent = api.withToken(token);
      String base =
          "/api/agents/"
              + task.path("agentId").asText()
              + "/tasks/"
              + task.path("taskId").asText()
              + "/";
      seen(asAgent.withToken(token + "A").post(base + "running", Map.of("attempt", 1)));
      seen(asAgent.post(base + "running", Map.of("attempt", 2)));
      seen(asAgent.post(base + "running", Map.of("attempt", 1)));
      seen(asAgent.post(base + "failed", Map.of("attempt", 1, "error", "a failure")));
      seen(asAgent.post(base + "completed", Map.of("attempt", 1)));
      seen(asAgent.post("/api/changes/" + changeId + "/cancel", Map.of()));
      core.database()
          .read(tx -> tx.query("SELECT secret FROM signing_keys", r -> r.getString(1)))
          .forEach(secrets::add);

      nats.destroy();
      nats.waitFor();
      await().atMost(Duration.ofSeconds(20)).until(() -> api.get("/readyz").status() == 503);
      readEverything(api, changeId);
      nats = startNats(port);
      await().atMost(Duration.ofSeconds(30)).until(() -> api.get("/readyz").status() == 200);
      readEverything(api, changeId);
    } finally {
      nats.destroy();
    }
    Process again = startNats(port);
    try {
      Settings wrong =
          settings.with(Map.of("nats.token", NATS_TOKEN + "-wrong", "nats.wait-at-start", "false"));
      assertThatThrownBy(
              () ->
                  CoreService.start(
                          new CoreConfig(natsUrl, dir.resolve("d2"), db.database().url(), 0, wrong))
                      .close())
          .satisfies(e -> outputs.add(NatsCredentialsTest.messages(e)));
    } finally {
      again.destroy();
    }
    assertThatThrownBy(() -> settings.with(Map.of("nats.user", "core")))
        .satisfies(e -> outputs.add(NatsCredentialsTest.messages(e)));
    assertThatThrownBy(
            () -> Settings.defaults().with(Map.of("database.password-file", DB_PASSWORD)))
        .satisfies(e -> outputs.add(NatsCredentialsTest.messages(e)));
  }

  /** Every read the dashboard makes, /metrics, the page itself and the health routes. */
  private void readEverything(ApiClient api, String changeId) throws Exception {
    JsonNode openapi = seen(api.get("/openapi.json")).body();
    for (Iterator<String> paths = openapi.path("paths").fieldNames(); paths.hasNext(); ) {
      String path = paths.next();
      String filled = path.replace("{changeId}", changeId).replace("{projectId}", "p-leak");
      if (openapi.path("paths").path(path).has("get") && !filled.contains("{")) {
        seen(api.get(filled));
      }
    }
    seen(api.get("/"));
    seen(api.get("/metrics"));
    seen(api.get("/dashboard/dashboard.js"));
  }

  private Answer seen(Answer answer) {
    outputs.add(answer.status() + " " + answer.text());
    return answer;
  }

  private Process startNats(int port) throws Exception {
    Process p =
        new ProcessBuilder(
                NatsServer.findBinary().toString(),
                "-a",
                "127.0.0.1",
                "-p",
                Integer.toString(port),
                "-js",
                "-sd",
                dir.resolve("js").toString(),
                "--auth",
                NATS_TOKEN)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("nats-" + System.nanoTime() + ".log").toFile())
            .start();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              try (Socket s = new Socket("127.0.0.1", port)) {
                return true;
              } catch (IOException e) {
                return false;
              }
            });
    return p;
  }

  private static String excerpt(String output, String secret) {
    int at = output.indexOf(secret);
    return output.substring(
        Math.max(0, at - 120), Math.min(output.length(), at + secret.length() + 40));
  }

  /** Writes to both streams. */
  private static final class Tee extends OutputStream {
    private final OutputStream a;
    private final OutputStream b;

    Tee(OutputStream a, OutputStream b) {
      this.a = a;
      this.b = b;
    }

    @Override
    public void write(int c) throws IOException {
      a.write(c);
      synchronized (b) {
        b.write(c);
      }
    }

    @Override
    public void write(byte[] bytes, int off, int len) throws IOException {
      a.write(bytes, off, len);
      synchronized (b) {
        b.write(bytes, off, len);
      }
    }
  }
}
