package org.rhumbatron.platform.queue;

import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.impl.Headers;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.platform.concurrent.Futures;

/** {@link CommandTransport} on JetStream: an async publish that completes with the PubAck. */
public final class JetStreamCommandTransport implements CommandTransport {
  private final JetStream js;

  public JetStreamCommandTransport(Connection connection) throws IOException {
    this.js = connection.jetStream();
  }

  @Override
  public CompletableFuture<Stored> publish(
      String subject, Map<String, String> headers, byte[] body) {
    Headers natsHeaders = new Headers();
    headers.forEach(natsHeaders::put);
    CompletableFuture<Stored> stored = new CompletableFuture<>();
    try {
      js.publishAsync(subject, natsHeaders, body)
          .whenComplete(
              (ack, error) -> {
                if (error == null) {
                  stored.complete(new Stored(ack.getSeqno(), ack.isDuplicate()));
                } else {
                  stored.completeExceptionally(Futures.unwrap(error));
                }
              });
    } catch (RuntimeException e) { // a closed connection throws at once
      stored.completeExceptionally(e);
    }
    return stored;
  }
}
