package org.rhumbatron.server;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.rhumbatron.platform.config.ReadAccess;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.config.SettingsException;

/**
 * Where core's HTTP server listens and how it is reached: the bind address and port, TLS, whether
 * reads need a credential, and the public URL that Agents and webhooks are told. Beyond loopback it
 * must not serve plain HTTP nor open reads, nor run without any credential, unless the operator
 * allows it with {@code http.insecure=true}.
 */
record HttpListen(
    String bind,
    int port,
    Path tlsCert,
    Path tlsKey,
    Duration tlsCheckEvery,
    ReadAccess reads,
    boolean metricsClosed,
    boolean insecure,
    String publicUrl) {

  static HttpListen of(CoreConfig config) {
    Settings s = config.settings();
    String cert = s.get(Settings.HTTP_TLS_CERT);
    String key = s.get(Settings.HTTP_TLS_KEY);
    return new HttpListen(
        s.get(Settings.HTTP_BIND),
        config.httpPort(),
        cert.isEmpty() ? null : Path.of(cert),
        key.isEmpty() ? null : Path.of(key),
        s.get(Settings.HTTP_TLS_CHECK_EVERY),
        s.get(Settings.API_READS),
        s.get(Settings.HTTP_METRICS_AUTH),
        s.get(Settings.HTTP_INSECURE),
        s.get(Settings.HTTP_PUBLIC_URL));
  }

  boolean tls() {
    return tlsCert != null;
  }

  /** Whether the bind address is this host's loopback (127.0.0.0/8, ::1, localhost). */
  boolean loopback() {
    try {
      return InetAddress.getByName(bind).isLoopbackAddress();
    } catch (UnknownHostException e) {
      throw new SettingsException(
          Settings.HTTP_BIND.key(), "'" + bind + "' does not resolve to an address of this host");
    }
  }

  boolean readsOpen() {
    return reads == ReadAccess.OPEN || (reads == ReadAccess.AUTO && loopback());
  }

  /**
   * Refuses, in one line naming each gap and how to allow it, to listen beyond loopback without
   * TLS, with open reads or without any credential; unless {@code http.insecure=true}.
   */
  void refuseExposure(boolean hasCredential) {
    if (loopback() || insecure) {
      return;
    }
    List<String> gaps = new ArrayList<>();
    if (!tls()) {
      gaps.add("without TLS (set http.tls.cert and http.tls.key)");
    }
    if (readsOpen()) {
      gaps.add("with reads open to anyone (set api.reads=credential or auto)");
    }
    if (!hasCredential) {
      gaps.add("without any credential (set api.token)");
    }
    if (!gaps.isEmpty()) {
      throw new SettingsException(
          Settings.HTTP_BIND.key(),
          "refusing to listen on "
              + bind
              + ", which is not loopback, "
              + String.join(" and ", gaps)
              + "; or set http.insecure=true to allow it on a private network");
    }
  }

  /**
   * {@code http.public-url}, else derived: the scheme of TLS, the bind address (this host's name
   * for a wildcard bind) and the port the server got.
   */
  String publicUrl(int actualPort) {
    if (!publicUrl.isEmpty()) {
      return publicUrl;
    }
    String host = bind;
    try {
      InetAddress address = InetAddress.getByName(bind);
      if (address.isAnyLocalAddress()) {
        host = InetAddress.getLocalHost().getHostName();
      }
    } catch (UnknownHostException e) {
      host = bind; // the bind check names it; the URL keeps what the operator wrote
    }
    if (host.contains(":")) {
      host = "[" + host + "]"; // an IPv6 literal
    }
    return URI.create((tls() ? "https" : "http") + "://" + host + ":" + actualPort).toString();
  }

  /** For the line core logs when it is up; "http port N" stays first, as scripts read it. */
  String describe(int actualPort) {
    return "http port "
        + actualPort
        + " on "
        + bind
        + (tls() ? " over TLS 1.2/1.3" : "")
        + ", reads "
        + (readsOpen() ? "open" : "need a credential")
        + (insecure && !loopback() ? ", insecure allowed" : "")
        + ", public URL "
        + publicUrl(actualPort);
  }
}
