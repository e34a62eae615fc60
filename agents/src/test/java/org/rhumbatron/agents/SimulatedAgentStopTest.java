package org.rhumbatron.agents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.lifecycle.LifecycleFixture;
import org.rhumbatron.lifecycle.changes.Wake;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * A simulated Agent whose Change ends is told to stop and ends its work at once, not at its next
 * step: its step delay here is an hour, so only the stop can end it within the test.
 */
class SimulatedAgentStopTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private LifecycleFixture f;

  @BeforeEach
  void start() throws Exception {
    f = new LifecycleFixture(nats.url(), db().url(), Map.of("agents.simulated.step-delay", "1h"));
    f.project("p1");
  }

  @AfterEach
  void stop() {
    f.close();
  }

  @DatabaseTest
  void anAgentWhoseChangeIsCancelledStopsItsWorkAtOnce() throws Exception {
    String c =
        f.lifecycle
            .changes()
            .create(
                "p1", "r1", WorkGraph.of(new TaskSpec("a", "a", List.of(), List.of("path:src/a/"))))
            .get()
            .change()
            .changeId();
    Wake w = f.lifecycle.changes().dispatch(c, "cmd_dispatch").get().wakes().get(0);
    try (SimulatedAgentRuntime agents = new SimulatedAgentRuntime(f.lifecycle, f.settings)) {
      f.lifecycle.ends().whenTaskStops(agents::stop);
      agents.start(w.task());
      assertThat(agents.works(w.task())).isTrue();

      assertThat(f.lifecycle.ends().cancel(c).get()).isTrue();

      await().atMost(Duration.ofSeconds(10)).until(() -> !agents.works(w.task()));
      assertThat(f.lifecycle.changes().task(w.taskId()).orElseThrow().state())
          .isEqualTo("cancelled");
    }
  }
}
