package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.app.CliTest.Run;
import org.rhumbatron.server.CoreService;
import org.rhumbatron.server.TestCores;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * {@code rhumbatron webhooks}: a secret is made and printed once, the list shows ids and times but
 * no secret, a revoked one leaves the list, and without the operator's token nothing is made.
 */
class WebhookCliTest {
  static final String TOKEN = "webhook-cli-token";

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir Path data;

  @Test
  void secretsAreMadeListedAndRevoked() throws Exception {
    try (CoreService core = TestCores.withToken(nats.url(), data, db.database().url(), TOKEN)) {
      Map<String, String> env =
          Map.of(
              "RHUMBATRON_URL",
              "http://127.0.0.1:" + core.httpPort(),
              "RHUMBATRON_API_TOKEN",
              TOKEN);
      Run first = CliTest.cli(env, "webhooks", "secret-create", "--json");
      assertThat(first.code()).as(first.err()).isZero();
      String secret = first.json().path("secret").asText();
      String keyId = first.json().path("keyId").asText();
      assertThat(secret).startsWith("whsec_");
      Run second = CliTest.cli(env, "webhooks", "secret-create");
      assertThat(second.out()).startsWith("KEYID").contains("whsec_");

      Run list = CliTest.cli(env, "webhooks", "secrets");
      assertThat(list.code()).as(list.err()).isZero();
      assertThat(list.out()).startsWith("KEYID").contains(keyId).doesNotContain("whsec_");
      assertThat(list.out().lines().count()).isEqualTo(3); // the header and both secrets

      Run revoked = CliTest.cli(env, "webhooks", "secret-revoke", keyId);
      assertThat(revoked.code()).as(revoked.err()).isZero();
      assertThat(CliTest.cli(env, "webhooks", "secrets").out()).doesNotContain(keyId);
      assertThat(CliTest.cli(env, "webhooks", "secret-revoke", keyId).code()).isEqualTo(1);

      Run refused =
          CliTest.cli(
              Map.of("RHUMBATRON_URL", env.get("RHUMBATRON_URL")), "webhooks", "secret-create");
      assertThat(refused.code()).isNotZero();
      assertThat(refused.out()).doesNotContain("whsec_");
    }
  }
}
