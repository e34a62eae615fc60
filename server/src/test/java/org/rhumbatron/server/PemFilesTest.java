package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The key forms core reads (PKCS#8, and PKCS#1 RSA as older tools write it) and the ones it refuses
 * with what to do, keys made by {@code openssl} at run time.
 */
class PemFilesTest {
  @TempDir Path dir;

  @Test
  void aPkcs1RsaKeyIsReadWithItsCertificate() throws Exception {
    openssl("genrsa", "-traditional", "-out", "rsa.key", "2048");
    assertThat(Files.readString(dir.resolve("rsa.key"))).startsWith("-----BEGIN RSA PRIVATE KEY");
    openssl("req", "-x509", "-key", "rsa.key", "-out", "rsa.pem", "-days", "1", "-subj", "/CN=rsa");
    KeyStore store =
        PemFiles.keyStore(dir.resolve("rsa.pem"), dir.resolve("rsa.key"), "p".toCharArray());
    assertThat(store.getKey(PemFiles.ALIAS, "p".toCharArray()).getAlgorithm()).isEqualTo("RSA");
    assertThat(store.getCertificateChain(PemFiles.ALIAS)).hasSize(1);
  }

  @Test
  void anEncryptedOrSec1KeyIsRefusedSayingHowToConvertIt() throws Exception {
    openssl("genpkey", "-algorithm", "RSA", "-aes256", "-pass", "pass:secret", "-out", "enc.key");
    assertThatThrownBy(() -> PemFiles.privateKey(dir.resolve("enc.key")))
        .hasMessage(
            "http.tls.key "
                + dir.resolve("enc.key")
                + " is encrypted; core needs it unencrypted (readable by core alone): openssl"
                + " pkcs8 -in KEY -out KEY.plain");
    openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ec.key");
    assertThatThrownBy(() -> PemFiles.privateKey(dir.resolve("ec.key")))
        .hasMessageContaining("is a SEC1 EC key; convert it to PKCS#8: openssl pkcs8 -topk8");
  }

  @Test
  void filesWithoutWhatTheyShouldHoldAreNamed() throws Exception {
    Path empty = Files.writeString(dir.resolve("empty.pem"), "nothing here\n");
    assertThatThrownBy(() -> PemFiles.privateKey(empty))
        .hasMessage(
            "http.tls.key " + empty + " holds no PEM private key (-----BEGIN PRIVATE KEY-----)");
    assertThatThrownBy(() -> PemFiles.certificates(empty))
        .hasMessageStartingWith("http.tls.cert " + empty);
    assertThatThrownBy(() -> PemFiles.certificates(dir.resolve("missing.pem")))
        .hasMessage("http.tls.cert " + dir.resolve("missing.pem") + ": no such file");
  }

  private void openssl(String... args) throws IOException, InterruptedException {
    List<String> command = new java.util.ArrayList<>(List.of("openssl"));
    command.addAll(List.of(args));
    Process p =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0).as(out).isTrue();
  }
}
