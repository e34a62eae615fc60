package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.config.SettingsException;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;
import org.rhumbatron.testkit.tls.TestCertificates;

/**
 * Core over TLS with a CA and certificate the test makes: TLS 1.2 and 1.3, the chain's server
 * certificate, a renewed certificate picked up without a restart and a broken one ignored; and
 * where core refuses to listen, naming what is missing.
 */
class HttpTlsTest {
  static final String TOKEN = "tls-operator-1";

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir Path data;
  @TempDir Path certsDir;

  CoreService start(Map<String, String> overrides) throws Exception {
    Map<String, String> s = new HashMap<>(Map.of("agents.simulated.step-delay", "5ms"));
    s.putAll(overrides);
    return CoreService.start(
        new CoreConfig(nats.url(), data, db.database().url(), 0, Settings.defaults().with(s)));
  }

  Map<String, String> tls(TestCertificates certs) {
    return Map.of(
        "api.token",
        TOKEN,
        "http.tls.cert",
        certs.serverChain().toString(),
        "http.tls.key",
        certs.serverKey().toString(),
        "http.tls.check-every",
        "100ms");
  }

  @Test
  void servesTls12And13AndPicksUpARenewedCertificate() throws Exception {
    TestCertificates certs = TestCertificates.create(certsDir, "DNS:localhost", "IP:127.0.0.1");
    try (CoreService core = start(tls(certs))) {
      assertThat(core.publicUrl()).isEqualTo("https://127.0.0.1:" + core.httpPort());
      SSLContext trust = certs.clientContext();
      HttpResponse<String> read = get(trust, core.publicUrl() + "/api/streams", null);
      assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
      for (String protocol : new String[] {"TLSv1.2", "TLSv1.3"}) {
        try (SSLSocket s = handshake(trust, core.httpPort(), protocol)) {
          assertThat(s.getSession().getProtocol()).isEqualTo(protocol);
          assertThat(serial(s)).isEqualTo(certs.serverSerial());
        }
      }
      // An independent client: openssl verifies the chain against the CA and negotiates 1.3.
      String handshake = sClient(certs, core.httpPort());
      System.out.println(handshake);
      assertThat(handshake).contains("Verification: OK").contains("Protocol version: TLSv1.3");
      assertThatThrownBy(
              () -> get(trust, "http://127.0.0.1:" + core.httpPort() + "/api/streams", null))
          .isInstanceOf(IOException.class);

      certs.renew();
      int renewed = certs.serverSerial();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> serialNow(certs, core.httpPort()) == renewed);

      // Half written: the server keeps the last good pair.
      Files.writeString(certs.serverKey(), "-----BEGIN PRIVATE KEY-----\nAAAA\n");
      await()
          .during(Duration.ofMillis(600))
          .atMost(Duration.ofSeconds(5))
          .until(() -> serialNow(certs, core.httpPort()) == renewed);
    }
  }

  @Test
  void beyondLoopbackWithTlsReadsNeedACredentialAndAgentsAreToldThePublicUrl() throws Exception {
    TestCertificates certs = TestCertificates.create(certsDir, "DNS:localhost", "IP:127.0.0.1");
    Map<String, String> s = new HashMap<>(tls(certs));
    s.put("http.bind", "0.0.0.0");
    s.put("http.public-url", "https://core.example.net:8443");
    try (CoreService core = start(s)) {
      assertThat(core.publicUrl()).isEqualTo("https://core.example.net:8443");
      String streams = "https://127.0.0.1:" + core.httpPort() + "/api/streams";
      SSLContext trust = certs.clientContext();
      assertThat(get(trust, streams, null).statusCode()).isEqualTo(401);
      assertThat(get(trust, streams, TOKEN).statusCode()).isEqualTo(200);
      String healthz = "https://127.0.0.1:" + core.httpPort() + "/healthz";
      assertThat(get(trust, healthz, null).statusCode()).as("a probe needs none").isEqualTo(200);
    }
  }

  @Test
  void refusesToListenBeyondLoopbackNamingWhatIsMissingAndHowToAllowIt() throws Exception {
    assertThatThrownBy(() -> start(Map.of("http.bind", "0.0.0.0", "api.token", TOKEN)))
        .isInstanceOf(SettingsException.class)
        .hasMessage(
            "setting http.bind: refusing to listen on 0.0.0.0, which is not loopback, without"
                + " TLS (set http.tls.cert and http.tls.key); or set http.insecure=true to allow it"
                + " on a private network");
    assertThatThrownBy(() -> start(Map.of("http.bind", "0.0.0.0", "api.reads", "open")))
        .hasMessageContaining("without TLS (set http.tls.cert and http.tls.key)")
        .hasMessageContaining("with reads open to anyone (set api.reads=credential or auto)")
        .hasMessageContaining("without any credential (set api.token)");
    try (CoreService core =
        start(Map.of("http.bind", "0.0.0.0", "api.token", TOKEN, "http.insecure", "true"))) {
      ApiClient api = new ApiClient("http://127.0.0.1:" + core.httpPort(), null);
      assertThat(api.get("/api/streams").status()).as("reads stay closed").isEqualTo(401);
      assertThat(api.withToken(TOKEN).get("/api/streams").status()).isEqualTo(200);
    }
  }

  @Test
  void aKeyOfAnotherCertificateFailsTheStartNamingBothFiles() throws Exception {
    TestCertificates certs = TestCertificates.create(certsDir, "DNS:localhost", "IP:127.0.0.1");
    Path oldKey = certsDir.resolve("old.key");
    Files.copy(certs.serverKey(), oldKey);
    certs.renew();
    Map<String, String> s = new HashMap<>(tls(certs));
    s.put("http.tls.key", oldKey.toString());
    assertThatThrownBy(() -> start(s))
        .hasMessage(
            "http.tls.key "
                + oldKey
                + " is not the key of the first certificate in "
                + certs.serverChain());
  }

  /** {@code openssl s_client -brief} against core, trusting the test's CA alone. */
  static String sClient(TestCertificates certs, int port) throws Exception {
    Process p =
        new ProcessBuilder(
                "openssl",
                "s_client",
                "-brief",
                "-connect",
                "127.0.0.1:" + port,
                "-servername",
                "localhost",
                "-verify_return_error",
                "-CAfile",
                certs.caCert().toString())
            .redirectErrorStream(true)
            .start();
    p.getOutputStream().close(); // no request: the handshake is all
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(30, TimeUnit.SECONDS);
    return out;
  }

  static HttpResponse<String> get(SSLContext trust, String url, String token) throws Exception {
    HttpClient http =
        HttpClient.newBuilder().sslContext(trust).connectTimeout(Duration.ofSeconds(5)).build();
    HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20));
    if (token != null) {
      r.header("Authorization", "Bearer " + token);
    }
    return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
  }

  static SSLSocket handshake(SSLContext trust, int port, String protocol) throws IOException {
    SSLSocket s = (SSLSocket) trust.getSocketFactory().createSocket("127.0.0.1", port);
    s.setEnabledProtocols(new String[] {protocol});
    s.setSoTimeout(10_000);
    s.startHandshake();
    return s;
  }

  static int serial(SSLSocket s) throws IOException {
    BigInteger serial =
        ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
    return serial.intValueExact();
  }

  /** The serial of the certificate a new handshake gets now (a new context: no resumption). */
  static int serialNow(TestCertificates certs, int port) throws Exception {
    try (SSLSocket s = handshake(certs.clientContext(), port, "TLSv1.3")) {
      return serial(s);
    }
  }
}
