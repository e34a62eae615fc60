package org.rhumbatron.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's TLS: TLS 1.2 and 1.3 only, with the certificate chain and key of two PEM files. The
 * files are checked every {@code http.tls.check-every}; a change is loaded into the running server
 * (new handshakes get it, open connections keep theirs), and a pair that does not load, as one
 * caught half written, leaves the last good one in place until the next check.
 */
final class HttpTls implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(HttpTls.class);
  static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

  private final Path cert;
  private final Path key;
  private final SslContextFactory.Server factory = new SslContextFactory.Server();
  // The in-memory store's password: random per start, never written anywhere.
  private final String pass;
  private final ScheduledExecutorService checker =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("tls-reload"));
  private List<Object> loaded;
  private volatile long reloads;

  private HttpTls(Path cert, Path key) {
    this.cert = cert;
    this.key = key;
    byte[] random = new byte[16];
    new SecureRandom().nextBytes(random);
    this.pass = HexFormat.of().formatHex(random);
  }

  /** Loads the pair now (a bad one fails the start) and checks for changes every {@code every}. */
  static HttpTls start(Path cert, Path key, Duration every) {
    HttpTls tls = new HttpTls(cert, key);
    tls.factory.setKeyStore(tls.keyStore());
    tls.factory.setKeyStorePassword(tls.pass);
    tls.factory.setIncludeProtocols(PROTOCOLS);
    tls.loaded = tls.stamp();
    tls.checker.scheduleWithFixedDelay(
        tls::checkOnce, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
    return tls;
  }

  SslContextFactory.Server factory() {
    return factory;
  }

  /** How often a changed pair was loaded since start. */
  long reloads() {
    return reloads;
  }

  private KeyStore keyStore() {
    return PemFiles.keyStore(cert, key, pass.toCharArray());
  }

  void checkOnce() {
    List<Object> now = stamp();
    if (Objects.equals(now, loaded)) {
      return;
    }
    try {
      KeyStore store = keyStore();
      factory.reload(f -> f.setKeyStore(store));
      loaded = now;
      reloads++;
      log.info("TLS certificate reloaded from {}", cert);
    } catch (Exception e) {
      // Half written, or a key of another certificate: the last good pair serves on.
      log.warn(
          "TLS certificate {} not reloaded, the previous one serves on: {}", cert, e.getMessage());
    }
  }

  /** What tells a changed pair: the digest of both files (a copy with an old time counts too). */
  private List<Object> stamp() {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      digest.update(Files.readAllBytes(cert));
      digest.update(Files.readAllBytes(key));
      return List.of(HexFormat.of().formatHex(digest.digest()));
    } catch (IOException | NoSuchAlgorithmException e) {
      return List.of(e.getClass().getSimpleName());
    }
  }

  @Override
  public void close() {
    checker.shutdownNow();
  }
}
