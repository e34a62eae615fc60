package org.rhumbatron.platform.queue;

import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The transport SPI under {@link Commands}: it moves bytes to a subject of the {@code COMMANDS}
 * stream with the headers it is given. It decides nothing: ids, subjects and headers come from
 * {@link Commands}.
 */
public interface CommandTransport {

  /** What the stream answered: its sequence, and whether it dropped the send as a repeat. */
  record Stored(long streamSequence, boolean duplicate) {}

  /**
   * Publishes {@code body} to {@code subject} with {@code headers} (which include {@code
   * Nats-Msg-Id}). Completes when the stream stored it, or fails with the transport's error.
   */
  CompletableFuture<Stored> publish(String subject, Map<String, String> headers, byte[] body);
}
