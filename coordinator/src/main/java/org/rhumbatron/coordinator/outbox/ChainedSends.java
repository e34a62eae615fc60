package org.rhumbatron.coordinator.outbox;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.platform.eventlog.EventLogException;
import org.rhumbatron.platform.eventlog.EventLogTransport;
import org.rhumbatron.platform.eventlog.EventOrigin;
import org.rhumbatron.protocol.EventStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lane's sends, chained by {@code Nats-Expected-Last-Msg-Id}: each expects the one before it on
 * the stream, so a message lost in a drop refuses what was sent after it instead of being
 * overtaken. Runs only on the stream's lane, whose chain state ({@link PublishLane}) it keeps.
 */
final class ChainedSends {
  private static final Logger log = LoggerFactory.getLogger(ChainedSends.class);

  private final EventLogTransport transport;
  private final Duration publishTimeout;
  private final Clock clock;

  ChainedSends(EventLogTransport transport, Duration publishTimeout, Clock clock) {
    this.transport = transport;
    this.publishTimeout = publishTimeout;
    this.clock = clock;
  }

  /**
   * Sends {@code toSend} in order, each expecting the one before it on the stream, and waits for
   * the PubAcks; the lane then knows the stream's last msg id, or that it must read it again.
   */
  SendOutcome send(int streamIndex, PublishLane lane, List<WaitingRow> toSend) {
    List<CompletableFuture<Long>> acks = new ArrayList<>(toSend.size());
    String expected = lane.lastMsgId;
    for (WaitingRow row : toSend) {
      EventOrigin origin = new EventOrigin(row.trace(), row.seq());
      acks.add(transport.publish(streamIndex, row.eventId(), row.payload(), expected, origin));
      expected = row.eventId();
    }
    SendOutcome outcome = SendOutcome.collect(toSend, acks, publishTimeout, transport, clock);
    if (outcome.failures.isEmpty()) {
      if (!toSend.isEmpty()) {
        lane.lastMsgId = toSend.get(toSend.size() - 1).eventId();
        lane.justSynced = false;
      }
    } else if (lane.justSynced && outcome.firstRefused()) {
      lane.lastMsgId = null; // the server does not know the id we read back: send without it
      lane.justSynced = false;
    } else {
      lane.synced = false; // read the stream's last message again before the next send
    }
    return outcome;
  }

  /** Reads the stream's last msg id; when the stream cannot be read, sends go out unchained. */
  void resync(int streamIndex, PublishLane lane) {
    try {
      long last = transport.lastSequence(streamIndex);
      lane.lastMsgId = last == 0 ? null : transport.messageIdAt(streamIndex, last).orElse(null);
      lane.synced = true;
      lane.justSynced = true;
    } catch (EventLogException e) {
      lane.lastMsgId = null; // the sends will fail or succeed on their own; try again next run
      log.warn(
          "cannot read the tail of {}: {}", EventStreams.streamName(streamIndex), e.getMessage());
    }
  }
}
