package org.rhumbatron.coordinator;

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
import org.rhumbatron.protocol.Headers;

/** Reads an event stream back, message by message, for assertions. */
public final class StreamContents {
  private static final EnvelopeCodec CODEC = new EnvelopeCodec();

  private StreamContents() {}

  /**
   * The Events of {@code projectId} on its stream, in stream order, each with its msg id checked.
   */
  public static List<Event> eventsOf(Connection nats, String projectId)
      throws IOException, JetStreamApiException {
    int stream = EventStreams.streamIndex(projectId);
    JetStreamManagement jsm = nats.jetStreamManagement();
    String name = EventStreams.streamName(stream);
    StreamInfo info = jsm.getStreamInfo(name);
    List<Event> events = new ArrayList<>();
    for (long seq = info.getStreamState().getFirstSequence();
        seq <= info.getStreamState().getLastSequence();
        seq++) {
      MessageInfo m;
      try {
        m = jsm.getMessage(name, seq);
      } catch (JetStreamApiException gone) {
        continue; // deleted message
      }
      if (m.getHeaders() != null && m.getHeaders().containsKey(Headers.FILLER)) {
        continue; // a sequence taken after a lost tail, not an Event
      }
      Event e = CODEC.decodeEvent(m.getData());
      if (!e.eventId().equals(m.getHeaders().getFirst(Headers.MSG_ID))) {
        throw new AssertionError("message " + seq + " has a msg id other than its event id");
      }
      if (e.projectId().equals(projectId)) {
        events.add(e);
      }
    }
    return events;
  }

  public static List<String> eventIdsOf(Connection nats, String projectId)
      throws IOException, JetStreamApiException {
    return eventsOf(nats, projectId).stream().map(Event::eventId).toList();
  }
}
