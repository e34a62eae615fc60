package org.rhumbatron.platform.jetstream;

import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.nio.file.Path;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.tls.PemCa;

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
      options.sslContext(PemCa.trusting("nats.tls.ca", Path.of(tlsCa)));
    }
    return options;
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
