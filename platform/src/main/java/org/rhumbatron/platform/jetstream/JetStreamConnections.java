package org.rhumbatron.platform.jetstream;

import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * How core connects to NATS: named, reconnecting forever (the outbox keeps rows while NATS is down,
 * so giving up would only lose the connection), client events and errors logged through SLF4J.
 */
public final class JetStreamConnections {
  public static final Duration DEFAULT_RECONNECT_WAIT = Duration.ofSeconds(1);
  public static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(5);

  /**
   * jnats 2.25.1 can leave a reconnected connection with a writer that sends nothing (status
   * CONNECTED, requests time out; nats-io/nats.java#1522). Unanswered pings make the client drop
   * and redo such a connection, so a short interval bounds the outage to about three intervals
   * instead of the default 2 min x 3.
   */
  public static final Duration DEFAULT_PING_INTERVAL = Duration.ofSeconds(10);

  private JetStreamConnections() {}

  /**
   * Connects to {@code url} (one URL, or the URLs of a cluster separated by commas: the client
   * takes any and fails over to the others). The first connect fails fast when no server answers,
   * so a wrong {@code --nats} is a clear error at start.
   */
  public static Connection connect(String url, String name)
      throws IOException, InterruptedException {
    return Nats.connect(options(url, name).build());
  }

  /**
   * Like {@link #connect(String, String)}, and runs {@code onReconnect} (on the client's event
   * thread) each time the connection is back after a loss, e.g. to resume publishing.
   */
  public static Connection connect(String url, String name, Runnable onReconnect)
      throws IOException, InterruptedException {
    return connect(url, name, NatsCredentials.NONE, onReconnect);
  }

  /** Like {@link #connect(String, String, Runnable)}, proving itself with {@code credentials}. */
  public static Connection connect(
      String url, String name, NatsCredentials credentials, Runnable onReconnect)
      throws IOException, InterruptedException {
    Slf4jNatsListener listener = new Slf4jNatsListener(name);
    return Nats.connect(
        credentials
            .applyTo(options(url, name))
            .connectionListener(
                (connection, event) -> {
                  listener.connectionEvent(connection, event);
                  if (event == io.nats.client.ConnectionListener.Events.RECONNECTED) {
                    onReconnect.run();
                  }
                })
            .build());
  }

  /**
   * One attempt of {@link #connect(String, String, Runnable)} for a caller that tries again itself
   * while it waits for NATS: a failed attempt throws without the client logging it (the caller says
   * that it waits), and the connection it returns logs and reconnects as {@link #connect} does.
   * (jnats' reconnect-on-connect would block the calling thread until a server answers.)
   */
  public static Connection tryConnect(String url, String name, Runnable onReconnect)
      throws IOException, InterruptedException {
    return tryConnect(url, name, NatsCredentials.NONE, onReconnect);
  }

  /**
   * Like {@link #tryConnect(String, String, Runnable)}, proving itself with {@code credentials}.
   */
  public static Connection tryConnect(
      String url, String name, NatsCredentials credentials, Runnable onReconnect)
      throws IOException, InterruptedException {
    AtomicBoolean connected = new AtomicBoolean();
    Slf4jNatsListener listener = new Slf4jNatsListener(name, connected::get);
    return Nats.connect(
        credentials
            .applyTo(options(url, name))
            .errorListener(listener)
            .connectionListener(
                (connection, event) -> {
                  if (event == ConnectionListener.Events.CONNECTED) {
                    connected.set(true);
                  }
                  if (!connected.get()) {
                    return; // a failed attempt's "disconnected"
                  }
                  listener.connectionEvent(connection, event);
                  if (event == ConnectionListener.Events.RECONNECTED) {
                    onReconnect.run();
                  }
                })
            .build());
  }

  /** The options {@link #connect} uses, for callers that add their own. */
  public static Options.Builder options(String url, String name) {
    Slf4jNatsListener listener = new Slf4jNatsListener(name);
    return new Options.Builder()
        .servers(NatsUrls.parse(url).toArray(String[]::new))
        .connectionName(name)
        .maxReconnects(-1)
        .reconnectWait(DEFAULT_RECONNECT_WAIT)
        .connectionTimeout(DEFAULT_CONNECTION_TIMEOUT)
        .pingInterval(DEFAULT_PING_INTERVAL)
        .errorListener(listener)
        .connectionListener(listener);
  }
}
