package org.rhumbatron.testkit.tls;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A test's own certificate authority and a server certificate it signed, made at run time with the
 * {@code openssl} command (no key is checked in). The server's PEM file holds its chain (the
 * server's certificate, then the CA's); {@link #renew} replaces the pair in place, as an operator's
 * certificate renewal does.
 */
public final class TestCertificates {
  private final Path dir;
  private final List<String> altNames;
  private int serial;

  private TestCertificates(Path dir, List<String> altNames) {
    this.dir = dir;
    this.altNames = altNames;
  }

  /**
   * A CA and a server certificate for {@code altNames} (like {@code DNS:localhost}, {@code
   * IP:127.0.0.1}) in {@code dir}.
   */
  public static TestCertificates create(Path dir, String... altNames)
      throws IOException, InterruptedException {
    TestCertificates certs = new TestCertificates(dir, List.of(altNames));
    certs.openssl(
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=rhumbatron test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign");
    certs.renew();
    return certs;
  }

  /** A new key and certificate for the server, signed by the same CA, written over the old. */
  public void renew() throws IOException, InterruptedException {
    serial++;
    openssl(
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        "next.key",
        "-out",
        "next.csr",
        "-subj",
        "/CN=rhumbatron test server " + serial);
    Files.writeString(
        dir.resolve("next.ext"),
        "subjectAltName=" + String.join(",", altNames) + "\nextendedKeyUsage=serverAuth\n");
    openssl(
        "x509",
        "-req",
        "-in",
        "next.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-set_serial",
        Integer.toString(1000 + serial),
        "-days",
        "2",
        "-extfile",
        "next.ext",
        "-out",
        "next.pem");
    String chain =
        Files.readString(dir.resolve("next.pem")) + Files.readString(dir.resolve("ca.pem"));
    Files.writeString(dir.resolve("next-chain.pem"), chain);
    // Key first, then the chain: a reader between the two moves sees a pair that does not match,
    // which the server must survive.
    Files.move(dir.resolve("next.key"), serverKey(), StandardCopyOption.REPLACE_EXISTING);
    Files.move(dir.resolve("next-chain.pem"), serverChain(), StandardCopyOption.REPLACE_EXISTING);
  }

  public Path caCert() {
    return dir.resolve("ca.pem");
  }

  /** The server's certificate followed by the CA's. */
  public Path serverChain() {
    return dir.resolve("server.pem");
  }

  public Path serverKey() {
    return dir.resolve("server.key");
  }

  /** The serial number of the server certificate in {@link #serverChain} now. */
  public int serverSerial() {
    return 1000 + serial;
  }

  /** A client context that trusts this CA alone. */
  public SSLContext clientContext() throws IOException, GeneralSecurityException {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    try (InputStream in = Files.newInputStream(caCert())) {
      int i = 0;
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        trust.setCertificateEntry("ca" + i++, (X509Certificate) c);
      }
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, tmf.getTrustManagers(), null);
    return context;
  }

  private void openssl(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add("openssl");
    command.addAll(List.of(args));
    Process p =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException("openssl " + String.join(" ", args) + " failed: " + out);
    }
  }
}
