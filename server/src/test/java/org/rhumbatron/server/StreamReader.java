package org.rhumbatron.server;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.StreamInfo;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;

/** Reads a project's event stream as it is on the server, message by message, in stream order. */
public final class StreamReader {
  private StreamReader() {}

  public static List<Event> events(Connection nats, String projectId)
      throws IOException, JetStreamApiException {
    JetStreamManagement jsm = nats.jetStreamManagement();
    String stream = EventStreams.streamName(EventStreams.streamIndex(projectId));
    StreamInfo info = jsm.getStreamInfo(stream);
    EnvelopeCodec codec = new EnvelopeCodec();
    List<Event> out = new ArrayList<>();
    for (long seq = info.getStreamState().getFirstSequence();
        seq <= info.getStreamState().getLastSequence();
        seq++) {
      MessageInfo m;
      try {
        m = jsm.getMessage(stream, seq);
      } catch (JetStreamApiException e) {
        continue; // a deleted sequence
      }
      Event e = codec.decodeEvent(m.getData());
      if (projectId.equals(e.projectId())) {
        out.add(e);
      }
    }
    return out;
  }
}
