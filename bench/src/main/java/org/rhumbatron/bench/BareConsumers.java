package org.rhumbatron.bench;

import io.nats.client.Connection;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.rhumbatron.protocol.EventStreams;

/** The router bench's raw figures: bare durable pull consumers on event stream 0, no work. */
final class BareConsumers {
  private static final Duration FETCH_WAIT = Duration.ofMillis(200);
  private static final String RAW_CONSUMER = "bench-raw";
  private static final String RAW_FIRST = "bench-raw-first";
  private static final String RAW_SECOND = "bench-raw-second";

  /** The consumers it makes, deleted with the event streams' others. */
  static final List<String> DURABLES = List.of(RAW_CONSUMER, RAW_FIRST, RAW_SECOND);

  private BareConsumers() {}

  /** Raw rate: a bare durable pull consumer fetching 100 at a time and acking each message. */
  static double fetchAck(Connection nats, int n) throws Exception {
    return bareFetchAck(nats, n, List.of(RAW_CONSUMER));
  }

  /**
   * What a run's two subscriptions cost without any work: two bare durable consumers on the same
   * messages, each batch of 100 fetched and acked on the first, then on the second, as a nudge runs
   * project-view-projector then causal-router. The rate counts each message once.
   */
  static double twoSubscriptions(Connection nats, int n) throws Exception {
    return bareFetchAck(nats, n, List.of(RAW_FIRST, RAW_SECOND));
  }

  private static double bareFetchAck(Connection nats, int n, List<String> durables)
      throws Exception {
    String stream = EventStreams.streamName(0);
    List<JetStreamSubscription> subs = new ArrayList<>();
    for (String durable : durables) {
      nats.jetStreamManagement()
          .addOrUpdateConsumer(
              stream,
              ConsumerConfiguration.builder()
                  .durable(durable)
                  .ackPolicy(AckPolicy.Explicit)
                  .filterSubject(EventStreams.streamSubject(0))
                  .build());
      subs.add(
          nats.jetStream()
              .subscribe(
                  EventStreams.streamSubject(0), PullSubscribeOptions.bind(stream, durable)));
    }
    long start = System.nanoTime();
    int[] got = new int[subs.size()];
    while (Arrays.stream(got).anyMatch(g -> g < n)) {
      for (int i = 0; i < subs.size(); i++) {
        if (got[i] == n) {
          continue; // a finished consumer's fetch would only wait out FETCH_WAIT
        }
        for (Message m : subs.get(i).fetch(100, FETCH_WAIT)) {
          m.ack();
          got[i]++;
        }
      }
    }
    double rate = n / ((System.nanoTime() - start) / 1e9);
    for (JetStreamSubscription sub : subs) {
      sub.unsubscribe();
    }
    return rate;
  }
}
