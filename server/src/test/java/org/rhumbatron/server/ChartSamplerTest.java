package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.rhumbatron.api.ChartWindow;
import org.rhumbatron.testkit.SettableClock;

/** The sampler over meters of /metrics' names, on a clock the test moves. */
class ChartSamplerTest {
  private final SettableClock clock = new SettableClock(Instant.parse("2026-12-07T08:00:00Z"));
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final ChartWindow window =
      new ChartWindow(clock, ChartWindow.SPAN, Duration.ofSeconds(2));
  private final ChartSampler sampler = new ChartSampler(registry, window, clock);
  private final AtomicLong published = new AtomicLong();
  private final AtomicLong handled = new AtomicLong();
  private final AtomicLong lag = new AtomicLong();

  @Test
  void countersBecomeRatesPerSecondAndLevelsStayAsTheyAre() {
    FunctionCounter.builder("rhumbatron.events.published", published, AtomicLong::get)
        .register(registry);
    FunctionCounter.builder("rhumbatron.queue.handled", handled, AtomicLong::get)
        .tag("queue", "agent-wakeups")
        .register(registry);
    for (String stream : new String[] {"EVENTS_00", "EVENTS_01"}) {
      Gauge.builder("rhumbatron.consumer.lag", lag, AtomicLong::get)
          .tags("stream", stream, "consumer", "audit-archiver")
          .register(registry);
    }
    Gauge.builder("rhumbatron.outbox.backlog", () -> Double.NaN).register(registry);

    ChartWindow.Sample first = sampler.sample();
    // No rate before a second sample; a level that cannot be read is null.
    assertThat(first.values()).containsEntry("events.published", null);
    assertThat(first.values()).containsEntry("outbox.backlog", null);
    assertThat(first.values()).containsEntry("lag.audit-archiver", 0.0);

    published.set(30);
    handled.set(4);
    lag.set(5);
    clock.advance(Duration.ofSeconds(2));
    ChartWindow.Sample second = sampler.sample();
    assertThat(second.values())
        .containsEntry("events.published", 15.0)
        .containsEntry("commands.agent-wakeups", 2.0)
        .containsEntry("lag.audit-archiver", 10.0);
    assertThat(window.since(null)).containsExactly(first, second);
  }
}
