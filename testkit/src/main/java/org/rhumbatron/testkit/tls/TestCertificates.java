package org.rhumbatron.testkit.tls;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throwaway CA and one server certificate it signed (EC P-256, valid a day), made with the {@code
 * openssl} command in a test's directory. {@code ca} is what a client trusts; {@code cert} and
 * {@code key} are what the server presents.
 */
public record TestCertificates(Path ca, Path cert, Path key) {

  /**
   * Makes them in {@code dir}; the server certificate names {@code subjectAltNames} (e.g. {@code
   * DNS:localhost}, {@code IP:127.0.0.1}).
   */
  public static TestCertificates make(Path dir, String... subjectAltNames)
      throws IOException, InterruptedException {
    Files.createDirectories(dir);
    Path ca = dir.resolve("ca.pem");
    Path caKey = dir.resolve("ca.key");
    Path cert = dir.resolve("server.pem");
    Path key = dir.resolve("server.key");
    Path csr = dir.resolve("server.csr");
    Path ext = dir.resolve("server.ext");
    Files.writeString(ext, "subjectAltName=" + String.join(",", subjectAltNames) + "\n");
    String curve = "ec_paramgen_curve:prime256v1";
    openssl(
        dir,
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        curve,
        "-nodes",
        "-keyout",
        caKey.toString(),
        "-out",
        ca.toString(),
        "-days",
        "1",
        "-subj",
        "/CN=rhumbatron test CA");
    openssl(
        dir,
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        curve,
        "-nodes",
        "-keyout",
        key.toString(),
        "-out",
        csr.toString(),
        "-subj",
        "/CN=rhumbatron test server");
    openssl(
        dir,
        "x509",
        "-req",
        "-in",
        csr.toString(),
        "-CA",
        ca.toString(),
        "-CAkey",
        caKey.toString(),
        "-CAcreateserial",
        "-out",
        cert.toString(),
        "-days",
        "1",
        "-extfile",
        ext.toString());
    return new TestCertificates(ca, cert, key);
  }

  private static void openssl(Path dir, String... args) throws IOException, InterruptedException {
    List<String> command = new java.util.ArrayList<>(List.of("openssl"));
    command.addAll(List.of(args));
    Process p =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IOException("openssl " + String.join(" ", args) + " failed: " + out);
    }
  }
}
