package org.rhumbatron.checker;

import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.StreamState;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.EnvelopeException;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Headers;
import org.rhumbatron.protocol.Queue;

/** Reads the 8 event streams and the COMMANDS stream as the server holds them. */
final class StreamReader {
  /** A message of an event stream as the server holds it; its Event null when undecodable. */
  record Stored(int stream, long seq, String msgId, Event event) {}

  private final JetStreamManagement jsm;
  private final EnvelopeCodec codec = new EnvelopeCodec();
  // Fillers core wrote after a lost tail (Headers.FILLER), seen by read.
  private long fillers;

  StreamReader(JetStreamManagement jsm) {
    this.jsm = jsm;
  }

  /** Every message of the event streams but fillers; a poison marker's is left undecoded. */
  List<Stored> read(Set<String> poisonMarkers) throws IOException, JetStreamApiException {
    List<Stored> out = new ArrayList<>();
    fillers = 0;
    for (int i = 0; i < EventStreams.STREAM_COUNT; i++) {
      String stream = EventStreams.streamName(i);
      StreamState state = jsm.getStreamInfo(stream).getStreamState();
      for (long seq = state.getFirstSequence(); seq <= state.getLastSequence(); seq++) {
        MessageInfo m;
        try {
          m = jsm.getMessage(stream, seq);
        } catch (JetStreamApiException deleted) {
          continue;
        }
        if (m.getHeaders() != null && m.getHeaders().containsKey(Headers.FILLER)) {
          fillers++;
          continue;
        }
        String msgId = m.getHeaders() == null ? null : m.getHeaders().getFirst("Nats-Msg-Id");
        Event event = null;
        if (msgId == null || !poisonMarkers.contains(msgId)) {
          try {
            event = codec.decodeEvent(m.getData());
          } catch (EnvelopeException malformed) {
            event = null;
          }
        }
        out.add(new Stored(i, seq, msgId, event));
      }
    }
    return out;
  }

  /** The fillers the last {@link #read} passed over. */
  long fillers() {
    return fillers;
  }

  long commandsStored() throws IOException, JetStreamApiException {
    return jsm.getStreamInfo(Queue.STREAM_NAME).getStreamState().getLastSequence();
  }
}
