package org.rhumbatron.platform.eventlog;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The transport SPI under the publisher: it moves bytes to one of the 8 event streams and reads a
 * stream's tail back. It stamps nothing; the outbox publisher decides ids and streams.
 */
public interface EventLogTransport {

  /** Streams this transport has a producer binding for (normally all of 0..7). */
  Set<Integer> boundStreams();

  /** False while the connection is down: the publisher then leaves rows waiting, uncounted. */
  boolean isConnected();

  /**
   * How many times the connection was lost; it moves at the loss, before the reconnect is
   * announced. The server behind a new connection may have lost a stream's tail, so nothing may be
   * published under a new value before the lost-tail check ran: a message sent first would take a
   * sequence a reader already saw.
   */
  default long connectionEpoch() {
    return 0;
  }

  /**
   * Publishes {@code body} to stream {@code streamIndex} with {@code Nats-Msg-Id} = {@code msgId}.
   * Completes with the stream sequence of the PubAck (the original's on a duplicate). With {@code
   * expectedLastMsgId} the server stores the message only right after that one, else the future
   * fails with {@link PredecessorMissingException}: the publisher chains its sends with it so that
   * a client's resend after a reconnect cannot overtake a message lost in the drop.
   */
  CompletableFuture<Long> publish(
      int streamIndex, String msgId, byte[] body, String expectedLastMsgId);

  /**
   * {@link #publish(int, String, byte[], String)} of a message that says where it comes from: the
   * trace of the transaction that wrote the Event (W3C headers) and its outbox row's seq, by which
   * a reader orders one writer's Events, since their stream order can differ after a lost tail. A
   * transport that carries no headers ignores {@code origin}.
   */
  default CompletableFuture<Long> publish(
      int streamIndex, String msgId, byte[] body, String expectedLastMsgId, EventOrigin origin) {
    return publish(streamIndex, msgId, body, expectedLastMsgId);
  }

  /** The stream's last sequence (0 when empty). */
  long lastSequence(int streamIndex);

  /** The {@code Nats-Msg-Id} of the message at {@code seq}, empty when there is none. */
  Optional<String> messageIdAt(int streamIndex, long seq);

  /**
   * After a stream lost its tail, its durable consumers may stand past its last sequence, and a
   * server does not deliver a message at a sequence a consumer has read past. This fills those
   * sequences with {@link org.rhumbatron.protocol.Headers#FILLER} messages, so what is published
   * next gets a sequence every consumer delivers. It fills up to {@code recordedUpTo} as well (the
   * highest sequence the outbox recorded for the stream): a consumer's own state can lose its tail
   * with the stream's, and a reader that kept a sequence (the project view does) must never see it
   * again on a newer message. Returns how many it filled (0 when nothing stood past the end). Call
   * it before anything else is published to the stream.
   */
  long fillReadPastSequences(int streamIndex, long recordedUpTo);
}
