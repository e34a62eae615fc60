package org.rhumbatron.platform.queue;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.platform.tracing.TraceContext;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.DeadLetterMessage;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Headers;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.protocol.StableIds;

/**
 * The public API for sending commands: {@code commands.send(command)}. It picks the queue from the
 * command's type, stamps the headers ({@code Nats-Msg-Id} = {@code <queue>:<commandId>}, so
 * JetStream drops a repeat inside its 2-hour window) and hands the bytes to the {@link
 * CommandTransport}. A send the stream did not store completes exceptionally with a {@link
 * CommandSendException}; an envelope that does not encode throws its {@code EnvelopeException} at
 * once.
 */
public final class Commands {
  private final CommandTransport transport;
  private final EnvelopeCodec codec;

  public Commands(CommandTransport transport, EnvelopeCodec codec) {
    this.transport = Objects.requireNonNull(transport, "transport");
    this.codec = Objects.requireNonNull(codec, "codec");
  }

  /** Sends {@code command} to the queue of its type. */
  public CompletableFuture<SendReceipt> send(Command command) {
    return sendTo(command.commandType().queue(), command);
  }

  /**
   * Sends {@code command} to {@code queue}, e.g. a candidate.create after a rebase to verification.
   */
  public CompletableFuture<SendReceipt> sendTo(Queue queue, Command command) {
    return publish(queue, StableIds.commandMessageId(queue, command.commandId()), command);
  }

  /**
   * An operator's Retry of a dead letter: {@code retried} (already at attempt + 1) goes to its
   * type's {@link org.rhumbatron.protocol.CommandType#retryQueue() retry queue} with {@link
   * #retryMessageId}, because the first send's id may still be inside the duplicate window.
   */
  public CompletableFuture<SendReceipt> resend(Command retried) {
    Queue queue = retried.commandType().retryQueue();
    return publish(queue, retryMessageId(queue, retried.commandId(), retried.attempt()), retried);
  }

  /**
   * Moves a message that failed its last retry on {@code message.originQueue()} to {@code
   * cmd.dead-letter}. {@code originSequence} (the original's sequence on {@code COMMANDS}) makes
   * the id, so a consumer that dies between this send and its term sends a repeat JetStream drops.
   */
  public CompletableFuture<SendReceipt> sendDeadLetter(
      DeadLetterMessage message, long originSequence) {
    String msgId = deadLetterMessageId(message.originQueue(), originSequence);
    Map<String, String> headers = headers(msgId);
    headers.put(Headers.ORIGIN_QUEUE, message.originQueue().wireName());
    return store(Queue.DEAD_LETTER, msgId, headers, codec.encodeDeadLetter(message));
  }

  /**
   * The id of an operator's re-send: {@code <queue>:<commandId>:a<attempt>}. It differs from the
   * first send's {@code <queue>:<commandId>} and from every other attempt's, and a double click on
   * Retry (same attempt) is still dropped as a repeat.
   */
  public static String retryMessageId(Queue queue, String commandId, int attempt) {
    return StableIds.commandMessageId(queue, commandId) + ":a" + attempt;
  }

  /** The id of a dead-letter message: {@code dead-letter:<originQueue>:<originSequence>}. */
  public static String deadLetterMessageId(Queue originQueue, long originSequence) {
    return Queue.DEAD_LETTER.wireName() + ":" + originQueue.wireName() + ":" + originSequence;
  }

  private CompletableFuture<SendReceipt> publish(Queue queue, String msgId, Command command) {
    byte[] body = codec.encodeCommand(command);
    Map<String, String> headers = headers(msgId);
    headers.put(Headers.COMMAND_TYPE, command.commandType().wireName());
    if (command.projectId() != null) {
      headers.put(Headers.PROJECT_ID, command.projectId());
    }
    return store(queue, msgId, headers, body);
  }

  private static Map<String, String> headers(String msgId) {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put(Headers.MSG_ID, msgId);
    // A subject outside COMMANDS (a missing stream, a typo) is refused, not silently dropped.
    headers.put(Headers.EXPECTED_STREAM, Queue.STREAM_NAME);
    headers.put(Headers.CONTENT_TYPE, Headers.APPLICATION_JSON);
    return headers;
  }

  private CompletableFuture<SendReceipt> store(
      Queue queue, String msgId, Map<String, String> headers, byte[] body) {
    // The sender's trace goes with the Command: its handle span joins it.
    TraceContext.writeCurrent(headers::put);
    CompletableFuture<SendReceipt> receipt = new CompletableFuture<>();
    CompletableFuture<CommandTransport.Stored> stored;
    try {
      stored = transport.publish(queue.subject(), headers, body);
    } catch (RuntimeException e) {
      receipt.completeExceptionally(new CommandSendException(queue, msgId, e));
      return receipt;
    }
    stored.whenComplete(
        (s, error) -> {
          if (error == null) {
            receipt.complete(new SendReceipt(queue, msgId, s.streamSequence(), s.duplicate()));
          } else {
            receipt.completeExceptionally(new CommandSendException(queue, msgId, error));
          }
        });
    return receipt;
  }
}
