package org.rhumbatron.platform.cluster;

import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import java.util.function.IntConsumer;
import org.rhumbatron.protocol.EventStreams;

/**
 * Tells the holder of a stream's duty, on whichever node, that rows wait on the stream: a core NATS
 * message per kick, no payload, at most once. Without it, rows a node commits for a stream another
 * node holds wait for the holder's poll of the outbox, which stays the backstop.
 */
public final class KickRelay implements AutoCloseable {
  static final String SUBJECT_PREFIX = "rhumbatron.cluster.kick.";

  private final Connection nats;
  private final Dispatcher dispatcher;

  private KickRelay(Connection nats, Dispatcher dispatcher) {
    this.nats = nats;
    this.dispatcher = dispatcher;
  }

  /**
   * Subscribes: each kick sent by any node for stream {@code s} calls {@code kickHeld.accept(s)}
   * here, which must do nothing unless this node holds the stream (else kicks would bounce).
   */
  public static KickRelay start(Connection nats, IntConsumer kickHeld) {
    Dispatcher d =
        nats.createDispatcher(
            msg -> {
              String subject = msg.getSubject();
              int stream;
              try {
                stream = Integer.parseInt(subject.substring(SUBJECT_PREFIX.length()));
              } catch (NumberFormatException e) {
                return; // not ours
              }
              if (stream >= 0 && stream < EventStreams.STREAM_COUNT) {
                kickHeld.accept(stream);
              }
            });
    d.subscribe(SUBJECT_PREFIX + "*");
    return new KickRelay(nats, d);
  }

  /** Asks the holder of {@code streamIndex} to publish now; lost while NATS is away. */
  public void send(int streamIndex) {
    try {
      nats.publish(SUBJECT_PREFIX + streamIndex, null);
    } catch (IllegalStateException closed) {
      // The connection is closing: the holder's poll finds the rows.
    }
  }

  @Override
  public void close() {
    try {
      nats.closeDispatcher(dispatcher);
    } catch (IllegalStateException closed) {
      // closed with its connection already
    }
  }
}
