package org.rhumbatron.cli;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** A TLS context that trusts the CA certificates of one PEM file ({@code --cacert}) alone. */
final class TrustedCa {
  private TrustedCa() {}

  static SSLContext context(Path pem) {
    String text = Cli.readFile("--cacert", pem);
    try {
      Collection<? extends Certificate> certs =
          CertificateFactory.getInstance("X.509")
              .generateCertificates(new ByteArrayInputStream(text.getBytes()));
      if (certs.isEmpty()) {
        throw new CliException(
            CliException.USAGE, "--cacert " + pem + ": no PEM certificate in it");
      }
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      int i = 0;
      for (Certificate c : certs) {
        trust.setCertificateEntry("ca-" + i++, c);
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, tmf.getTrustManagers(), null);
      return context;
    } catch (GeneralSecurityException | IOException e) {
      throw new CliException(
          CliException.USAGE, "--cacert " + pem + ": not a PEM certificate: " + e.getMessage());
    }
  }
}
