package org.rhumbatron.platform.tls;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** A TLS context that trusts the CA certificates of one PEM file and no other. */
public final class PemCa {
  private PemCa() {}

  /**
   * Trusts the certificates of {@code pem}; {@code what} names where the file was given (a setting
   * or an option), for the error.
   */
  public static SSLContext trusting(String what, Path pem) throws IOException {
    try (InputStream in = Files.newInputStream(pem)) {
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int n = 0;
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        store.setCertificateEntry("ca-" + n++, c);
      }
      if (n == 0) {
        throw new IOException(what + " " + pem + " holds no PEM certificate");
      }
      TrustManagerFactory trust =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trust.init(store);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, trust.getTrustManagers(), null);
      return context;
    } catch (GeneralSecurityException e) {
      throw new IOException(what + " " + pem + " is not a usable CA file: " + e.getMessage(), e);
    }
  }
}
