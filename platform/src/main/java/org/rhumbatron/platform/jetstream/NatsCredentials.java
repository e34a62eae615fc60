package org.rhumbatron.platform.jetstream;

import io.nats.client.Nats;
import io.nats.client.Options;
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
import org.rhumbatron.platform.config.Settings;

/**
 * How core proves itself to NATS (a user and password, a token, or a creds file; at most one, as
 * the settings' rules check) and which CA it trusts for the server's TLS certificate. Empty strings
 * mean none. {@link #toString} never shows the password or the token.
 */
public record NatsCredentials(
    String user, String password, String token, String credsFile, String tlsCa) {

  public static final NatsCredentials NONE = new NatsCredentials("", "", "", "", "");

  public static NatsCredentials fromSettings(Settings settings) {
    return new NatsCredentials(
        settings.get(Settings.NATS_USER),
        settings.get(Settings.NATS_PASSWORD),
        settings.get(Settings.NATS_TOKEN),
        settings.get(Settings.NATS_CREDS),
        settings.get(Settings.NATS_TLS_CA));
  }

  /** Adds these credentials and the TLS trust to {@code options}. */
  Options.Builder applyTo(Options.Builder options) throws IOException {
    if (!user.isEmpty()) {
      options.userInfo(user.toCharArray(), password.toCharArray());
    }
    if (!token.isEmpty()) {
      options.token(token.toCharArray());
    }
    if (!credsFile.isEmpty()) {
      options.authHandler(Nats.credentials(credsFile));
    }
    if (!tlsCa.isEmpty()) {
      options.sslContext(trusting(Path.of(tlsCa)));
    }
    return options;
  }

  /** TLS 1.2 or 1.3 that trusts the certificates of the PEM file {@code ca} and no other. */
  static SSLContext trusting(Path ca) throws IOException {
    try (InputStream in = Files.newInputStream(ca)) {
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int n = 0;
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        store.setCertificateEntry("ca-" + n++, c);
      }
      if (n == 0) {
        throw new IOException("nats.tls.ca " + ca + " holds no PEM certificate");
      }
      TrustManagerFactory trust =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trust.init(store);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, trust.getTrustManagers(), null);
      return context;
    } catch (GeneralSecurityException e) {
      throw new IOException("nats.tls.ca " + ca + " is not a usable CA file: " + e.getMessage(), e);
    }
  }

  @Override
  public String toString() {
    String kind =
        !user.isEmpty()
            ? "user " + user
            : !token.isEmpty() ? "a token" : !credsFile.isEmpty() ? "creds " + credsFile : "none";
    return "NatsCredentials[" + kind + (tlsCa.isEmpty() ? "" : ", CA " + tlsCa) + "]";
  }
}
