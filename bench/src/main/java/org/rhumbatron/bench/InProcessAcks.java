package org.rhumbatron.bench;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.rhumbatron.platform.eventlog.EventLogTransport;
import org.rhumbatron.protocol.EventStreams;

/**
 * A transport that acknowledges every send at once with the stream's next sequence and sends
 * nothing: {@code bench outbox --acks in-process} uses it to measure the outbox's own path (the
 * actors' commits, the publisher's reads and its published marks) without NATS, the ceiling of the
 * outbox figure on the machine. Never a part of core.
 */
final class InProcessAcks implements EventLogTransport {
  private static final Set<Integer> ALL =
      IntStream.range(0, EventStreams.STREAM_COUNT).boxed().collect(Collectors.toUnmodifiableSet());

  private final AtomicLongArray lastSequence = new AtomicLongArray(EventStreams.STREAM_COUNT);

  @Override
  public Set<Integer> boundStreams() {
    return ALL;
  }

  @Override
  public boolean isConnected() {
    return true;
  }

  @Override
  public CompletableFuture<Long> publish(
      int streamIndex, String msgId, byte[] body, String expectedLastMsgId) {
    return CompletableFuture.completedFuture(lastSequence.incrementAndGet(streamIndex));
  }

  @Override
  public long lastSequence(int streamIndex) {
    return lastSequence.get(streamIndex);
  }

  @Override
  public Optional<String> messageIdAt(int streamIndex, long seq) {
    return Optional.empty(); // nothing is kept: the publisher then sends its next row unchained
  }

  @Override
  public long fillReadPastSequences(int streamIndex, long recordedUpTo) {
    return 0; // nothing is kept, so no consumer reads it
  }
}
