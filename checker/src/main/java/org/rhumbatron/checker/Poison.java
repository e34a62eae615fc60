package org.rhumbatron.checker;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nats.client.JetStream;
import io.nats.client.Message;
import io.nats.client.api.PublishAck;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.protocol.Sha256;

/**
 * Hostile messages for the event streams and every {@code cmd.<queue>}: not JSON, JSON of the wrong
 * shape or types, unknown types, huge payloads, unicode edge cases, and valid envelopes for
 * Projects that do not exist. Each carries a marker ({@code poison-<run>-<n>}) in its {@code
 * Nats-Msg-Id} and, where the shape allows, in its body, so the checker can find where it ended.
 */
final class Poison {
  /** A poison message as sent: where, its marker, and the id it decodes to (or null). */
  record Sent(
      String kind,
      String subject,
      boolean eventStream,
      String marker,
      String decodedId,
      long streamSequence) {
    /** Whether no consumer can decode it (see {@link #UNDECODABLE}). */
    boolean undecodable() {
      return UNDECODABLE.contains(kind);
    }
  }

  static final Pattern MARKER = Pattern.compile("poison-[a-z0-9]+-[0-9]+");

  /**
   * The kinds whose messages never decode, on an event stream or a queue (the envelope's own rules
   * reject each, {@code PoisonTest}): every consumer must dead-letter them on their first failure
   * with the decode error, for a retry of them can never succeed.
   */
  static final Set<String> UNDECODABLE =
      Set.of("not-json", "json-array", "wrong-types", "unknown-type", "huge-payload", "unicode");

  static final List<String> KINDS =
      List.of(
          "not-json",
          "json-array",
          "wrong-types",
          "unknown-type",
          "huge-payload",
          "unicode",
          "unknown-project");

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final EnvelopeCodec CODEC = new EnvelopeCodec();
  private static final int HUGE_BYTES = 900 * 1024;

  private final String runId;
  private final Random random;

  Poison(String runId, long seed) {
    this.runId = runId;
    this.random = new Random(seed);
  }

  /** Finds every marker in {@code text}. */
  static List<String> markers(String text) {
    List<String> out = new ArrayList<>();
    Matcher m = MARKER.matcher(text);
    while (m.find()) {
      out.add(m.group());
    }
    return out;
  }

  /**
   * Sends {@code count} messages, spread over the event streams of {@code streams} (indexes) and
   * the 6 queues.
   */
  List<Sent> send(JetStream js, int count, int offset, List<Integer> streams) throws Exception {
    List<Sent> sent = new ArrayList<>();
    Queue[] queues = Queue.values();
    int targets = streams.size() + queues.length;
    for (int i = 0; i < count; i++) {
      int n = offset + i;
      String marker = "poison-" + runId + "-" + n;
      String kind = KINDS.get(random.nextInt(KINDS.size()));
      int target = random.nextInt(targets);
      boolean event = target < streams.size();
      String subject =
          event
              ? EventStreams.streamSubject(streams.get(target))
              : queues[target - streams.size()].subject();
      Body body = body(kind, marker, event, subject);
      Headers headers = new Headers().put("Nats-Msg-Id", marker);
      Message m =
          NatsMessage.builder().subject(subject).headers(headers).data(body.bytes()).build();
      PublishAck ack = publish(js, m);
      sent.add(new Sent(kind, subject, event, marker, body.decodedId(), ack.getSeqno()));
    }
    return sent;
  }

  /** Attempts of one publish, {@link #RETRY_PAUSE_MILLIS} apart: a minute in all. */
  static final int PUBLISH_ATTEMPTS = 120;

  static final long RETRY_PAUSE_MILLIS = 500;

  /**
   * Publishes {@code m}, again while JetStream does not answer (a cluster electing its leaders
   * after a fault answers "no responders" for a few seconds); its {@code Nats-Msg-Id} makes a
   * repeat of a publish that did land a duplicate the server drops.
   */
  private static PublishAck publish(JetStream js, Message m) throws Exception {
    for (int attempt = 1; ; attempt++) {
      try {
        return js.publish(m);
      } catch (java.io.IOException | io.nats.client.JetStreamApiException e) {
        if (attempt >= PUBLISH_ATTEMPTS) {
          throw e;
        }
        Thread.sleep(RETRY_PAUSE_MILLIS);
      }
    }
  }

  record Body(byte[] bytes, String decodedId) {}

  Body body(String kind, String marker, boolean event, String subject) throws Exception {
    return switch (kind) {
      case "not-json" ->
          new Body(
              ("{{not json " + marker + " \u0000\u00ff").getBytes(StandardCharsets.UTF_8), null);
      case "json-array" ->
          new Body(
              ("[\"" + marker + "\", 1, null, {\"eventId\": 7}]").getBytes(StandardCharsets.UTF_8),
              null);
      case "wrong-types" -> {
        ObjectNode o = envelope(marker, event, subject);
        o.put(event ? "timestamp" : "createdAt", 12345);
        o.putArray(event ? "projectId" : "commandType").add(marker);
        yield new Body(JSON.writeValueAsBytes(o), idOf(o, event));
      }
      case "unknown-type" -> {
        ObjectNode o = envelope(marker, event, subject);
        o.put(event ? "eventType" : "commandType", "nope." + marker);
        yield new Body(JSON.writeValueAsBytes(o), idOf(o, event));
      }
      case "huge-payload" -> {
        ObjectNode o = envelope(marker, event, subject);
        ObjectNode payload = o.putObject("payload");
        payload.put("marker", marker);
        payload.put("filler", "x".repeat(HUGE_BYTES));
        yield new Body(JSON.writeValueAsBytes(o), idOf(o, event));
      }
      case "unicode" -> {
        ObjectNode o = envelope(marker, event, subject);
        ObjectNode payload = o.putObject("payload");
        payload.put("marker", marker);
        payload.put("text", "\uD83D\uDE00 \u202E\u0301\uFEFF \uDBFF\uDFFF " + lone());
        o.put(event ? "actor" : "commandId", "\u0000" + marker + "\u202E");
        yield new Body(JSON.writeValueAsBytes(o), idOf(o, event));
      }
      default -> {
        ObjectNode o = envelope(marker, event, subject);
        yield new Body(JSON.writeValueAsBytes(o), idOf(o, event));
      }
    };
  }

  /**
   * The id a consumer claims if it decodes the body after all (a huge or odd but valid envelope):
   * then a claim of it is a good end too.
   */
  private static String idOf(ObjectNode o, boolean event) {
    return o.path(event ? "eventId" : "commandId").asText(null);
  }

  /** A lone surrogate: legal in a Java string, not in UTF-8 (Jackson writes it as is). */
  private String lone() {
    return random.nextBoolean() ? "\uD800" : "\uDC00";
  }

  /** A valid envelope for a Project no one created, of a type the target queue serves. */
  private static ObjectNode envelope(String marker, boolean event, String subject) {
    String hex = hex(marker);
    Instant at = Instant.parse("2026-01-01T00:00:00Z");
    String project = "p-" + marker;
    String change = "chg_" + hex;
    ObjectNode payload = JSON.createObjectNode().put("attempt", 1).put("marker", marker);
    if (event) {
      return CODEC.toJson(
          new Event(
              "evt_" + hex,
              EventType.TASK_COMPLETED,
              Event.CURRENT_VERSION,
              "t-poison",
              project,
              change,
              change + ":t01",
              "agent:" + marker,
              null,
              null,
              null,
              marker,
              at,
              payload));
    }
    Queue queue = Queue.fromWire(subject.substring(Queue.SUBJECT_PREFIX.length()));
    CommandType type =
        Arrays.stream(CommandType.values())
            .filter(t -> t.queue() == queue)
            .findFirst()
            .orElse(CommandType.AGENT_WAKE);
    return CODEC.toJson(
        new Command("cmd_" + marker, type, project, change, change + ":t01", 1, at, null, payload));
  }

  private static String hex(String text) {
    return Sha256.hex(text, 16);
  }
}
