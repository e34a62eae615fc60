package org.rhumbatron.router.archive;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Base64;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.protocol.EnvelopeCodec;

/**
 * The body of an archive object: gzip of one JSON line per record, in stream order. A decoded
 * record is its Event envelope as the codec writes it. A record that did not decode is kept, not
 * dropped (an audit archive must show what the log held): a line {@code {"malformed":true,
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

  private byte[] line(EventRecord r) {
    if (r.decoded()) {
      return codec.encodeEvent(r.event());
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
