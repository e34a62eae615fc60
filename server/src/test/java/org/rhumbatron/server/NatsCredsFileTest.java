package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nats.client.NKey;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.ConfiguredNatsServer;

/**
 * Core against a nats-server in operator mode, the way NATS deployments hand out users: an
 * operator, an account with JetStream, and a user whose JWT and seed sit in a creds file. With
 * {@code nats.creds} core provisions a Project (a command through JetStream); with the creds of a
 * user the server does not know it does not start, and its error does not show the seed.
 */
class NatsCredsFileTest {
  static final String TOKEN = "nats-creds-file-api-token";

  @RegisterExtension final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir Path dir;
  final SecureRandom random = new SecureRandom();
  ConfiguredNatsServer server;
  int port;
  NKey account;

  @BeforeEach
  void startOperatorModeNats() throws Exception {
    NKey operator = NKey.createOperator(random);
    account = NKey.createAccount(random);
    NKey system = NKey.createAccount(random);
    String operatorJwt = jwt(operator, operator, "test-operator", claims("operator"));
    ObjectNode limits = claims("account");
    ObjectNode l = limits.putObject("limits");
    for (String k :
        new String[] {
          "subs",
          "data",
          "payload",
          "imports",
          "exports",
          "conn",
          "leaf",
          "mem_storage",
          "disk_storage",
          "streams",
          "consumer"
        }) {
      l.put(k, -1);
    }
    l.put("wildcards", true);
    String accountJwt = jwt(operator, account, "core-account", limits);
    String systemJwt = jwt(operator, system, "SYS", claims("account"));
    server =
        ConfiguredNatsServer.start(
            dir,
            "operator: " + operatorJwt,
            "system_account: " + new String(system.getPublicKey()),
            "resolver: MEMORY",
            "resolver_preload: {",
            "  " + new String(account.getPublicKey()) + ": " + accountJwt,
            "  " + new String(system.getPublicKey()) + ": " + systemJwt,
            "}");
    port = server.port();
  }

  @AfterEach
  void stopNats() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  private static ObjectNode claims(String type) {
    ObjectNode nats = ApiClient.JSON.createObjectNode();
    nats.put("type", type);
    nats.put("version", 2);
    return nats;
  }

  /** A NATS JWT (ed25519-nkey) for {@code subject}, signed by {@code issuer}. */
  private static String jwt(NKey issuer, NKey subject, String name, ObjectNode nats)
      throws Exception {
    ObjectNode claims = ApiClient.JSON.createObjectNode();
    claims.put("jti", UUID.randomUUID().toString().replace("-", "").toUpperCase());
    claims.put("iat", Instant.now().getEpochSecond());
    claims.put("iss", new String(issuer.getPublicKey()));
    claims.put("name", name);
    claims.put("sub", new String(subject.getPublicKey()));
    claims.set("nats", nats);
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    String body =
        b64.encodeToString(
                "{\"typ\":\"JWT\",\"alg\":\"ed25519-nkey\"}".getBytes(StandardCharsets.UTF_8))
            + "."
            + b64.encodeToString(ApiClient.JSON.writeValueAsBytes(claims));
    return body + "." + b64.encodeToString(issuer.sign(body.getBytes(StandardCharsets.UTF_8)));
  }

  /** A creds file, as {@code nsc generate creds} writes it, for a new user of {@code signer}. */
  private Path creds(NKey signer, String file) throws Exception {
    NKey user = NKey.createUser(random);
    ObjectNode nats = claims("user");
    nats.put("issuer_account", new String(account.getPublicKey()));
    nats.put("subs", -1);
    nats.put("data", -1);
    nats.put("payload", -1);
    String userJwt = jwt(signer, user, "core", nats);
    Path path = dir.resolve(file);
    Files.writeString(
        path,
        "-----BEGIN NATS USER JWT-----\n"
            + userJwt
            + "\n------END NATS USER JWT------\n\n"
            + "-----BEGIN USER NKEY SEED-----\n"
            + new String(user.getSeed())
            + "\n------END USER NKEY SEED------\n");
    return path;
  }

  private CoreConfig core(Path credsFile) {
    Settings settings =
        Settings.defaults()
            .with(
                Map.of(
                    "api.token",
                    TOKEN,
                    "nats.wait-at-start",
                    "false",
                    "nats.creds",
                    credsFile.toString()));
    return new CoreConfig(
        "nats://127.0.0.1:" + port, dir.resolve("data"), db.database().url(), 0, settings);
  }

  @Test
  void coreWorksWithACredsFile() throws Exception {
    try (CoreService core = CoreService.start(core(creds(account, "core.creds")))) {
      ApiClient api = ApiClient.of(core, TOKEN);
      assertThat(
              api.post("/api/projects", Map.of("projectId", "p-jwt", "tenantId", "t", "name", "J"))
                  .status())
          .isEqualTo(202);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> api.get("/api/projects/p-jwt").status() == 200);
      assertThat(api.get("/healthz").body().path("nats").asText()).isEqualTo("connected");
    }
  }

  @Test
  void theCredsOfAnUnknownUserStopTheStartWithoutShowingTheSeed() throws Exception {
    Path stranger = creds(NKey.createAccount(random), "stranger.creds");
    String seed = Files.readAllLines(stranger).get(5);
    assertThat(seed).startsWith("SU");
    assertThatThrownBy(() -> CoreService.start(core(stranger)).close())
        .satisfies(
            e ->
                assertThat(NatsCredentialsTest.messages(e))
                    .isNotEmpty()
                    .doesNotContain(seed)
                    .doesNotContain(seed.substring(10, 30)));
  }
}
