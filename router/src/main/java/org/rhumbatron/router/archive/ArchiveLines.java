package org.rhumbatron.router.archive;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.protocol.EnvelopeCodec;

/**
 * The body of an archive object: gzip of one JSON line per record, in stream order. A decoded
 * record is its bytes as published, or, when those span lines, its Event envelope as the codec
 * writes it. A record that did not decode is kept, not dropped (an audit archive must show what the
 * log held): a line {@code {"malformed":true,
 * "streamSequence":..,"messageId":..,"error":..,"dataBase64":..}} with its raw bytes, which no
 * envelope can be mistaken for (an envelope has no {@code malformed} field).
 */
final class ArchiveLines {
  static final String MALFORMED = "malformed";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final EnvelopeCodec codec;

  ArchiveLines(EnvelopeCodec codec) {
    this.codec = codec;
  }

  /** The gzip NDJSON of {@code records}; the same records give the same bytes. */
  byte[] gzip(List<EventRecord> records) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    // GZIPOutputStream writes 0 as the header's mtime, so the bytes depend on the records only.
    try (GZIPOutputStream gzip = new GZIPOutputStream(bytes)) {
      for (EventRecord r : records) {
        gzip.write(line(r));
        gzip.write('\n');
      }
    } catch (IOException e) {
      throw new UncheckedIOException("gzip into memory failed", e);
    }
    return bytes.toByteArray();
  }

  /**
   * The record ids ({@link ArchiveKey}'s: the Event id, else the message id, else {@code seq:<n>})
   * of an archive object's body.
   */
  static Set<String> ids(byte[] gzip) {
    Set<String> ids = new HashSet<>();
    try (BufferedReader lines =
        new BufferedReader(
            new InputStreamReader(
                new GZIPInputStream(new ByteArrayInputStream(gzip)), StandardCharsets.UTF_8))) {
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        JsonNode node = JSON.readTree(line);
        if (node.path(MALFORMED).asBoolean(false)) {
          JsonNode msgId = node.get("messageId");
          ids.add(
              msgId != null && !msgId.isNull()
                  ? msgId.asText()
                  : "seq:" + node.path("streamSequence").asLong());
        } else {
          ids.add(node.path("eventId").asText());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read an archive object", e);
    }
    return ids;
  }

  private static boolean oneLine(byte[] data) {
    for (byte b : data) {
      if (b == '\n' || b == '\r') {
        return false;
      }
    }
    return true;
  }

  private byte[] line(EventRecord r) {
    if (r.decoded()) {
      // The published bytes decoded, so they are the envelope; core's own writer puts no newline.
      return oneLine(r.data()) ? r.data() : codec.encodeEvent(r.event());
    }
    ObjectNode line = JSON.createObjectNode();
    line.put(MALFORMED, true);
    line.put("streamSequence", r.streamSequence());
    line.put("messageId", r.messageId());
    line.put("error", r.decodeError().getMessage());
    line.put("dataBase64", Base64.getEncoder().encodeToString(r.data()));
    try {
      return JSON.writeValueAsBytes(line);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a tree of strings and numbers always serializes", e);
    }
  }
}
