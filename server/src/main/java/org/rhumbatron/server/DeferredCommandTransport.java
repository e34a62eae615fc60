package org.rhumbatron.server;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.platform.queue.CommandTransport;

/**
 * The queues' transport while core waits for NATS: a send fails at once (a {@code
 * CommandSendException} naming the URL, 503 in the API) instead of waiting in the client's buffer
 * for a stream that may not exist yet; after {@link #bind} it is the real transport.
 */
final class DeferredCommandTransport implements CommandTransport {
  private final String notConnected;
  private volatile CommandTransport transport;

  DeferredCommandTransport(String notConnected) {
    this.notConnected = notConnected;
  }

  void bind(CommandTransport real) {
    this.transport = real;
  }

  @Override
  public CompletableFuture<Stored> publish(
      String subject, Map<String, String> headers, byte[] body) {
    CommandTransport t = transport;
    return t == null
        ? CompletableFuture.failedFuture(new IllegalStateException(notConnected))
        : t.publish(subject, headers, body);
  }
}
