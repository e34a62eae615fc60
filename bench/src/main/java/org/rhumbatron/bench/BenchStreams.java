package org.rhumbatron.bench;

import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Queue;

/**
 * The streams a bench purges on a server that may not be its own: it first refuses ones that hold
 * messages or consumers, so that it never drops a core's Commands or Events.
 */
final class BenchStreams {
  private BenchStreams() {}

  static List<String> eventStreams() {
    List<String> streams = new ArrayList<>();
    for (int s = 0; s < EventStreams.STREAM_COUNT; s++) {
      streams.add(EventStreams.streamName(s));
    }
    return streams;
  }

  static List<String> commandAndEventStreams() {
    List<String> streams = new ArrayList<>(List.of(Queue.STREAM_NAME));
    streams.addAll(eventStreams());
    return streams;
  }

  /** What each of {@code streams} that exists holds: "S holds N messages and M consumers". */
  static List<String> kept(JetStreamManagement jsm, List<String> streams) throws Exception {
    List<String> kept = new ArrayList<>();
    List<String> existing = jsm.getStreamNames();
    for (String stream : streams) {
      if (!existing.contains(stream)) {
        continue; // not made yet: nothing kept in it
      }
      var state = jsm.getStreamInfo(stream).getStreamState();
      if (state.getMsgCount() > 0 || state.getConsumerCount() > 0) {
        kept.add(
            stream
                + " holds "
                + state.getMsgCount()
                + " messages and "
                + state.getConsumerCount()
                + " consumers");
      }
    }
    return kept;
  }

  /** The server holds no queue or router state of another core: streams empty, no consumers. */
  static void refuseBusyServer(JetStreamManagement jsm) throws Exception {
    List<String> kept = kept(jsm, commandAndEventStreams());
    if (!kept.isEmpty()) {
      throw new IllegalStateException(
          "bench lifecycle runs a core of its own, and purges the COMMANDS and event streams and"
              + " deletes their consumers after it; on this server "
              + String.join(", ", kept)
              + " (a core runs or ran here): leave out --nats to run a private nats-server");
    }
  }

  /** Purges COMMANDS and the 8 event streams and deletes their consumers. */
  static void clear(JetStreamManagement jsm) throws IOException, JetStreamApiException {
    for (String stream : commandAndEventStreams()) {
      for (String consumer : jsm.getConsumerNames(stream)) {
        try {
          jsm.deleteConsumer(stream, consumer);
        } catch (JetStreamApiException gone) {
          // deleted meanwhile: nothing to delete
        }
      }
      jsm.purgeStream(stream);
    }
  }

  /** Deletes {@code durable} on {@code stream} if it is there. */
  static void deleteConsumer(JetStreamManagement jsm, String stream, String durable)
      throws IOException {
    try {
      jsm.deleteConsumer(stream, durable);
    } catch (JetStreamApiException absent) {
      // Not there yet: nothing to delete.
    }
  }
}
