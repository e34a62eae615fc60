package org.rhumbatron.app;

import java.time.Clock;
import org.rhumbatron.agents.SimulatedAgentRuntime;
import org.rhumbatron.agents.WakeConsumer;
import org.rhumbatron.integration.IntegrationConsumer;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.metrics.MetricsBinding;
import org.rhumbatron.platform.metrics.PlatformMetrics;
import org.rhumbatron.protocol.Queue;

/**
 * The queue consumers of the Change lifecycle, each with its row of {@link QueueConsumers}: the
 * integration module's one handler on integration, verification and release; the wake consumer on
 * agent-wakeups with the simulated Agents; the indexing queue, whose handlers are the next issue's.
 * With the dead-letter consumer that {@link CommandQueues} runs, all six queues have a consumer.
 */
final class LifecycleConsumers implements AutoCloseable {
  private final SimulatedAgentRuntime agents;

  private LifecycleConsumers(SimulatedAgentRuntime agents) {
    this.agents = agents;
  }

  static LifecycleConsumers start(
      CommandQueues queues,
      Lifecycle lifecycle,
      Database database,
      Clock clock,
      Settings settings) {
    IntegrationConsumer integration =
        new IntegrationConsumer(
            lifecycle, queues.commands(), queues.deadLetters(), database, clock, settings);
    for (Queue q : new Queue[] {Queue.INTEGRATION, Queue.VERIFICATION, Queue.RELEASE}) {
      queues.run(q, integration, null);
    }
    SimulatedAgentRuntime agents = new SimulatedAgentRuntime(lifecycle, settings);
    queues.run(
        Queue.AGENT_WAKEUPS,
        new WakeConsumer(
            lifecycle, agents, new PlatformMetrics(database, clock, MetricsBinding.METRICS)),
        null);
    queues.runIndexer(
        (command, delivery) -> {
          throw new IllegalStateException(
              "no indexer handler for "
                  + command.commandType().wireName()
                  + " yet: retried, then recorded as failed in project_indexes");
        });
    agents.resumeHeld();
    return new LifecycleConsumers(agents);
  }

  @Override
  public void close() {
    agents.close();
  }
}
