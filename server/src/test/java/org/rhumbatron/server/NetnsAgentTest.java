package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;
import org.rhumbatron.testkit.tls.TestCertificates;

/**
 * The Python Agent of docs/api.md, run as it is written there, in its own network namespace: a veth
 * pair with the test's own addresses is its only link to core. Core listens on its end of the link
 * ({@code http.bind}) over TLS with a certificate of the test's own CA, which the Agent trusts
 * through {@code SSL_CERT_FILE}. The Agent verifies every signed webhook and reports with the task
 * token alone until its Change completes; an unsigned call to it is refused. Where namespaces
 * cannot be made, the test says so and runs the Agent on 127.0.0.2, core on 127.0.0.1.
 */
class NetnsAgentTest {
  static final String OPERATOR = "netns-operator-token";
  static final int AGENT_PORT = 9000;

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir Path dir;

  /** Where the Agent runs, and the processes and links to undo afterwards. */
  static final class AgentNetwork implements AutoCloseable {
    final String namespace; // null: the second loopback address, no namespace
    final String coreSide;
    final String agentAddress;
    final List<Process> processes = new ArrayList<>();

    private AgentNetwork(String namespace, String coreSide, String agentAddress) {
      this.namespace = namespace;
      this.coreSide = coreSide;
      this.agentAddress = agentAddress;
    }

    /** A namespace with a veth pair 10.231.N.1 (here) and 10.231.N.2 (there), or 127.0.0.2. */
    static AgentNetwork make() throws Exception {
      long pid = ProcessHandle.current().pid();
      String ns = "rtns" + pid;
      String here = "rtv" + pid + "h";
      String there = "rtv" + pid + "t";
      int n = (int) (pid % 200) + 20;
      String coreSide = "10.231." + n + ".1";
      String agentSide = "10.231." + n + ".2";
      String failed =
          run(
              List.of("ip", "netns", "add", ns),
              List.of("ip", "link", "add", here, "type", "veth", "peer", "name", there),
              List.of("ip", "link", "set", there, "netns", ns),
              List.of("ip", "addr", "add", coreSide + "/30", "dev", here),
              List.of("ip", "link", "set", here, "up"),
              List.of(
                  "ip", "netns", "exec", ns, "ip", "addr", "add", agentSide + "/30", "dev", there),
              List.of("ip", "netns", "exec", ns, "ip", "link", "set", there, "up"),
              List.of("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"));
      if (failed != null) {
        run(List.of("ip", "netns", "del", ns), List.of("ip", "link", "del", here));
        System.out.println(
            "network namespaces cannot be made here (" + failed + "): the Agent runs on 127.0.0.2");
        return new AgentNetwork(null, "127.0.0.1", "127.0.0.2");
      }
      return new AgentNetwork(ns, coreSide, agentSide);
    }

    /** Starts {@code command} where the Agent lives, its output to {@code log}. */
    Process start(List<String> command, Map<String, String> env, Path log) throws IOException {
      List<String> full = new ArrayList<>();
      if (namespace != null) {
        full.addAll(List.of("ip", "netns", "exec", namespace));
      }
      full.addAll(command);
      ProcessBuilder builder = new ProcessBuilder(full).redirectErrorStream(true);
      builder.redirectOutput(log.toFile()).environment().putAll(env);
      Process p = builder.start();
      processes.add(p);
      return p;
    }

    /** curl in the namespace with {@code args}: null when it got a 2xx, else what failed. */
    String curl(String... args) throws Exception {
      List<String> command =
          new ArrayList<>(List.of("ip", "netns", "exec", namespace, "curl", "-sf", "-m", "5"));
      command.addAll(List.of(args));
      return run(command);
    }

    /** Runs each command in turn; the first that fails, as text, or null. */
    static String run(List<String>... commands) throws Exception {
      for (List<String> command : commands) {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(20, TimeUnit.SECONDS) || p.exitValue() != 0) {
          return String.join(" ", command) + ": " + out.strip();
        }
      }
      return null;
    }

    @Override
    public void close() throws Exception {
      for (Process p : processes) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
      if (namespace != null) {
        run(List.of("ip", "netns", "del", namespace)); // takes the veth pair with it
      }
    }
  }

  /** The block of docs/api.md that a comment marks as the Agent, as written there. */
  static String agentFromDocs() throws IOException {
    String doc = Files.readString(Path.of("..", "docs", "api.md"));
    int marker = doc.indexOf("<!-- agent.py: a test runs this block as it is -->");
    assertThat(marker).as("the marked Python block in docs/api.md").isPositive();
    int start = doc.indexOf("```python\n", marker) + "```python\n".length();
    return doc.substring(start, doc.indexOf("```", start));
  }

  static boolean accepts(String host, int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host, port), 1_000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  @Test
  void theDocsAgentInItsOwnNetworkCompletesAChangeWithSignedWakesAndTaskTokens() throws Exception {
    Path agentPy = dir.resolve("agent.py");
    Files.writeString(agentPy, agentFromDocs());
    Path agentLog = dir.resolve("agent.log");
    try (AgentNetwork net = AgentNetwork.make()) {
      String webhook = "http://" + net.agentAddress + ":" + AGENT_PORT + "/wake";
      TestCertificates certs = TestCertificates.create(dir, "IP:" + net.coreSide);
      Settings settings =
          Settings.defaults()
              .with(
                  Map.of(
                      "agents.runtime",
                      "webhook",
                      "agents.webhook.url",
                      webhook,
                      "changes.auto-approve",
                      "true",
                      "verifier.simulated.duration",
                      "0ms",
                      "release.simulated.duration",
                      "0ms",
                      "api.token",
                      OPERATOR,
                      "http.bind",
                      net.coreSide,
                      "http.tls.cert",
                      certs.serverChain().toString(),
                      "http.tls.key",
                      certs.serverKey().toString()));
      try (CoreService core =
          CoreService.start(new CoreConfig(nats.url(), data(), db.database().url(), 0, settings))) {
        int port = core.httpPort();
        assertThat(core.publicUrl()).isEqualTo("https://" + net.coreSide + ":" + port);
        if (net.namespace != null) {
          // Core listens on its end of the link only, and only over TLS.
          assertThat(accepts("127.0.0.1", port)).isFalse();
          String healthz = "https://" + net.coreSide + ":" + port + "/healthz";
          assertThat(net.curl("--cacert", certs.caCert().toString(), healthz)).isNull();
          assertThat(net.curl(healthz.replace("https:", "http:"))).isNotNull();
        }
        ApiClient api = new ApiClient(core.publicUrl(), OPERATOR, certs.clientContext());
        String secret = api.post("/api/webhooks/secrets", Map.of()).body().path("secret").asText();
        net.start(
            List.of("python3", agentPy.toString()),
            Map.of(
                "WEBHOOK_SECRET",
                secret,
                "HOST",
                net.agentAddress,
                "PORT",
                Integer.toString(AGENT_PORT),
                "SSL_CERT_FILE",
                certs.caCert().toString()),
            agentLog);
        await().atMost(Duration.ofSeconds(20)).until(() -> accepts(net.agentAddress, AGENT_PORT));

        HttpResponse<String> unsigned =
            HttpClient.newHttpClient()
                .send(
                    HttpRequest.newBuilder(URI.create(webhook))
                        .POST(HttpRequest.BodyPublishers.ofString("{\"kind\":\"start\"}"))
                        .build(),
                    HttpResponse.BodyHandlers.ofString());
        assertThat(unsigned.statusCode()).isEqualTo(401);

        AgentChanges.provision(api, "p-net");
        String changeId =
            AgentChanges.create(
                api,
                "p-net",
                List.of(
                    Map.of("key", "a", "resourceScopes", List.of("path:src/a/")),
                    Map.of(
                        "key",
                        "b",
                        "dependsOn",
                        List.of("a"),
                        "resourceScopes",
                        List.of("path:src/b/", "path:docs/"))));
        String state = AgentChanges.awaitEnd(api, changeId).path("state").asText();
        List<String> lines = Files.readAllLines(agentLog);
        assertThat(state).as(String.join("\n", lines)).isEqualTo("completed");
        long starts = lines.stream().filter(l -> l.startsWith("wake start ")).count();
        long refused = lines.stream().filter(l -> l.startsWith("wake refused")).count();
        long reports =
            lines.stream().filter(l -> l.startsWith("report ") && l.endsWith(" 200")).count();
        assertThat(starts).isEqualTo(2);
        assertThat(refused).isEqualTo(1); // the test's own unsigned call
        assertThat(reports)
            .isEqualTo(2 * 3 + 2 * 1 + 2 * 2); // running, changeset, completed; claims
        System.out.printf(
            "agent %s: %d signed wakes taken, %d unsigned refused, %d reports with task tokens%n",
            net.namespace == null
                ? "on 127.0.0.2"
                : "in netns " + net.namespace + " at " + net.agentAddress,
            starts,
            refused,
            reports);
      }
    }
  }

  private Path data() {
    return dir.resolve("data");
  }
}
