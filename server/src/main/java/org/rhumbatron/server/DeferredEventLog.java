package org.rhumbatron.server;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.rhumbatron.platform.eventlog.ConnectionLostException;
import org.rhumbatron.platform.eventlog.EventLogException;
import org.rhumbatron.platform.eventlog.EventLogTransport;
import org.rhumbatron.platform.eventlog.EventOrigin;
import org.rhumbatron.protocol.EventStreams;

/**
 * The coordinator's event log while core waits for NATS: disconnected, so the publisher keeps every
 * row waiting and counts no attempt, until {@link #bind} hands it the real log. Binding needs the
 * streams to exist, which they may not before NATS first answers.
 */
final class DeferredEventLog implements EventLogTransport {
  // All streams, so no row is set aside as unbound before the real binding is known.
  private static final Set<Integer> ALL_STREAMS =
      IntStream.range(0, EventStreams.STREAM_COUNT).boxed().collect(Collectors.toUnmodifiableSet());

  private final String notConnected;
  private volatile EventLogTransport log;

  /** {@code notConnected}: what a call says before the binding, naming the NATS URL. */
  DeferredEventLog(String notConnected) {
    this.notConnected = notConnected;
  }

  void bind(EventLogTransport real) {
    this.log = real;
  }

  boolean isBound() {
    return log != null;
  }

  @Override
  public Set<Integer> boundStreams() {
    EventLogTransport l = log;
    return l == null ? ALL_STREAMS : l.boundStreams();
  }

  @Override
  public boolean isConnected() {
    EventLogTransport l = log;
    return l != null && l.isConnected();
  }

  @Override
  public long connectionEpoch() {
    EventLogTransport l = log;
    return l == null ? 0 : l.connectionEpoch();
  }

  @Override
  public CompletableFuture<Long> publish(
      int streamIndex, String msgId, byte[] body, String expectedLastMsgId) {
    return publish(streamIndex, msgId, body, expectedLastMsgId, EventOrigin.NONE);
  }

  @Override
  public CompletableFuture<Long> publish(
      int streamIndex, String msgId, byte[] body, String expectedLastMsgId, EventOrigin origin) {
    EventLogTransport l = log;
    return l == null
        ? CompletableFuture.failedFuture(new ConnectionLostException(notConnected))
        : l.publish(streamIndex, msgId, body, expectedLastMsgId, origin);
  }

  @Override
  public long lastSequence(int streamIndex) {
    return bound().lastSequence(streamIndex);
  }

  @Override
  public Optional<String> messageIdAt(int streamIndex, long seq) {
    return bound().messageIdAt(streamIndex, seq);
  }

  @Override
  public long fillReadPastSequences(int streamIndex, long recordedUpTo) {
    return bound().fillReadPastSequences(streamIndex, recordedUpTo);
  }

  private EventLogTransport bound() {
    EventLogTransport l = log;
    if (l == null) {
      throw new EventLogException(notConnected, null);
    }
    return l;
  }
}
