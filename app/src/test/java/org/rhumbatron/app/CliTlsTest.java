package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.server.CoreConfig;
import org.rhumbatron.server.CoreService;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;
import org.rhumbatron.testkit.tls.TestCertificates;

/** The CLI against core over TLS: with {@code --cacert} of the test's own CA, and without. */
class CliTlsTest {
  static final String TOKEN = "cli-tls-token-1";

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir Path data;
  @TempDir Path certsDir;

  @Test
  void trustsTheCaOfCacertAndSaysSoWhenItIsMissing() throws Exception {
    TestCertificates certs = TestCertificates.create(certsDir, "DNS:localhost", "IP:127.0.0.1");
    Settings settings =
        Settings.defaults()
            .with(
                Map.of(
                    "api.token", TOKEN,
                    "http.tls.cert", certs.serverChain().toString(),
                    "http.tls.key", certs.serverKey().toString()));
    try (CoreService core =
        CoreService.start(new CoreConfig(nats.url(), data, db.database().url(), 0, settings))) {
      Map<String, String> env =
          Map.of("RHUMBATRON_URL", core.publicUrl(), "RHUMBATRON_API_TOKEN", TOKEN);
      int[] code = new int[1];
      String out = run(env, code, "streams", "--cacert", certs.caCert().toString());
      assertThat(code[0]).as(out).isZero();
      String viaEnv =
          run(
              Map.of(
                  "RHUMBATRON_URL", core.publicUrl(),
                  "RHUMBATRON_API_TOKEN", TOKEN,
                  "RHUMBATRON_CACERT", certs.caCert().toString()),
              code,
              "tokens",
              "list");
      assertThat(code[0]).as(viaEnv).isZero();
      String untrusted = run(env, code, "streams");
      assertThat(code[0]).isEqualTo(3);
      assertThat(untrusted).contains("pass --cacert");
      String missing = run(env, code, "streams", "--cacert", certsDir.resolve("no.pem").toString());
      assertThat(code[0]).isEqualTo(2);
      assertThat(missing).contains("--cacert " + certsDir.resolve("no.pem") + ": no such file");
    }
  }

  /** Runs the CLI; its stdout and stderr together, its exit code in {@code code[0]}. */
  static String run(Map<String, String> env, int[] code, String... args) {
    StringWriter out = new StringWriter();
    code[0] = Main.run(env, new PrintWriter(out), new PrintWriter(out), args);
    return out.toString();
  }
}
