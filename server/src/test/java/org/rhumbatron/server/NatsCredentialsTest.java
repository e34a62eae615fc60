package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.ConfiguredNatsServer;
import org.rhumbatron.testkit.tls.TestCertificates;

/**
 * Core against a nats-server that requires TLS and a user: with {@code nats.user}, {@code
 * nats.password} and {@code nats.tls.ca} it provisions a Project (a command through JetStream);
 * with a wrong password or without the CA it does not start, and its error names neither the
 * password nor anything of it.
 */
class NatsCredentialsTest {
  static final String PASSWORD = "nats-pw-Zq81xK";
  static final String TOKEN = "nats-creds-api-token";

  @RegisterExtension final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir Path dir;
  ConfiguredNatsServer server;
  int port;
  TestCertificates certs;

  @BeforeEach
  void startSecuredNats() throws Exception {
    Files.createDirectories(dir.resolve("tls"));
    certs = TestCertificates.create(dir.resolve("tls"), "DNS:localhost", "IP:127.0.0.1");
    server =
        ConfiguredNatsServer.start(
            dir,
            "tls { cert_file: \""
                + certs.serverChain()
                + "\", key_file: \""
                + certs.serverKey()
                + "\" }",
            "authorization { user: core, password: \"" + PASSWORD + "\" }");
    port = server.port();
  }

  @AfterEach
  void stopNats() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  private CoreConfig core(Map<String, String> nats) {
    Settings settings =
        Settings.defaults()
            .with(Map.of("api.token", TOKEN, "nats.wait-at-start", "false"))
            .with(nats);
    return new CoreConfig(
        "nats://127.0.0.1:" + port, dir.resolve("data"), db.database().url(), 0, settings);
  }

  @Test
  void coreWorksThroughTlsAndAUser() throws Exception {
    Map<String, String> nats =
        Map.of(
            "nats.user",
            "core",
            "nats.password",
            PASSWORD,
            "nats.tls.ca",
            certs.caCert().toString());
    try (CoreService core = CoreService.start(core(nats))) {
      ApiClient api = ApiClient.of(core, TOKEN);
      assertThat(
              api.post("/api/projects", Map.of("projectId", "p-tls", "tenantId", "t", "name", "T"))
                  .status())
          .isEqualTo(202);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> api.get("/api/projects/p-tls").status() == 200);
      assertThat(api.get("/healthz").body().path("nats").asText()).isEqualTo("connected");
    }
  }

  @Test
  void aWrongPasswordOrAMissingCaStopsTheStartWithoutShowingThePassword() {
    String wrong = PASSWORD + "-wrong";
    Map<String, String> badPassword =
        Map.of(
            "nats.user", "core", "nats.password", wrong, "nats.tls.ca", certs.caCert().toString());
    assertThatThrownBy(() -> CoreService.start(core(badPassword)).close())
        .satisfies(e -> assertThat(messages(e)).doesNotContain(wrong).doesNotContain("Zq81xK"));
    Map<String, String> noCa = Map.of("nats.user", "core", "nats.password", PASSWORD);
    assertThatThrownBy(() -> CoreService.start(core(noCa)).close())
        .satisfies(e -> assertThat(messages(e)).doesNotContain("Zq81xK"));
    assertThatThrownBy(() -> CoreService.start(core(Map.of())).close())
        .satisfies(e -> assertThat(messages(e)).isNotEmpty());
  }

  /** The messages of {@code e} and its causes, as a log line with its stack would show them. */
  static String messages(Throwable e) {
    StringBuilder all = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      all.append(t).append('\n');
    }
    return all.toString();
  }
}
