package org.rhumbatron.server;

import java.net.URI;
import java.time.Clock;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.rhumbatron.agents.AgentRuntime;
import org.rhumbatron.agents.SimulatedAgentRuntime;
import org.rhumbatron.agents.WakeConsumer;
import org.rhumbatron.agents.WebhookAgentRuntime;
import org.rhumbatron.agents.WebhookSignatures;
import org.rhumbatron.indexer.IndexConsumer;
import org.rhumbatron.indexer.SimulatedIndexBuilder;
import org.rhumbatron.integration.IntegrationConsumer;
import org.rhumbatron.integration.SimulatedVerifier;
import org.rhumbatron.integration.Workflows;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.workflow.WorkflowEngine;
import org.rhumbatron.platform.cluster.Duty;
import org.rhumbatron.platform.cluster.DutyListener;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.rhumbatron.platform.config.AgentRuntimeKind;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.metrics.MetricsBinding;
import org.rhumbatron.platform.metrics.PlatformMetrics;
import org.rhumbatron.platform.secrets.SigningKeys;
import org.rhumbatron.protocol.Queue;

/**
 * The queue consumers of the Change lifecycle, each with its row of {@link QueueConsumers}: the
 * integration module's one handler on integration, verification and release, with its verification
 * and release Workflows (simulated verifier and release); the wake consumer on agent-wakeups with
 * the simulated Agents or the webhook to Agents outside core ({@code agents.runtime}); the indexer
 * on indexing, with the simulated index builder and the failure hook of {@link
 * CommandQueues#runIndexer}. With the dead-letter consumer that {@link CommandQueues} runs, all six
 * queues have a consumer.
 */
final class LifecycleConsumers implements AutoCloseable {
  private final AgentRuntime agents;
  private final WorkflowEngine workflows;
  private final ExecutorService workflowThreads;

  private LifecycleConsumers(
      AgentRuntime agents, WorkflowEngine workflows, ExecutorService workflowThreads) {
    this.agents = agents;
    this.workflows = workflows;
    this.workflowThreads = workflowThreads;
  }

  static LifecycleConsumers start(
      CommandQueues queues,
      Lifecycle lifecycle,
      Database database,
      Clock clock,
      Settings settings,
      Supplier<String> apiBaseUrl,
      DutyOwnership ownership) {
    ExecutorService workflowThreads =
        Executors.newFixedThreadPool(2, DaemonThreads.named("workflow"));
    WorkflowEngine workflows =
        new WorkflowEngine(
            database,
            clock,
            workflowThreads,
            settings.get(Settings.WORKFLOW_STEP_TRIES),
            settings.get(Settings.WORKFLOW_RETRY_PAUSE));
    Workflows.register(
        workflows,
        lifecycle,
        new SimulatedVerifier(settings),
        Workflows.simulatedReleaser(settings),
        queues.commands(),
        clock,
        settings.get(Settings.AUTO_APPROVE));
    lifecycle
        .approvals()
        .whenWorkflowSendFails(
            command ->
                Workflows.workflowStartFor(command)
                    .ifPresent(s -> workflows.start(s.type(), s.instanceId(), s.input())));
    IntegrationConsumer integration =
        new IntegrationConsumer(
            lifecycle,
            workflows,
            queues.commands(),
            queues.deadLetters()::supersedeForChange,
            clock,
            settings);
    for (Queue q : new Queue[] {Queue.INTEGRATION, Queue.VERIFICATION, Queue.RELEASE}) {
      queues.run(q, integration, null);
    }
    AgentRuntime agents;
    SimulatedAgentRuntime simulated = null;
    if (settings.get(Settings.AGENT_RUNTIME) == AgentRuntimeKind.WEBHOOK) {
      agents =
          new WebhookAgentRuntime(
              lifecycle,
              URI.create(settings.get(Settings.AGENT_WEBHOOK_URL)),
              settings.get(Settings.AGENT_WEBHOOK_TIMEOUT),
              apiBaseUrl,
              new WebhookSignatures(new SigningKeys(database, clock), clock));
    } else {
      simulated = new SimulatedAgentRuntime(lifecycle, settings);
      agents = simulated;
    }
    lifecycle.ends().whenTaskStops(agents::stop); // a Task cancelled because its Change ended
    queues.run(
        Queue.AGENT_WAKEUPS,
        new WakeConsumer(
            lifecycle, agents, new PlatformMetrics(database, clock, MetricsBinding.METRICS)),
        null);
    queues.runIndexer(
        new IndexConsumer(lifecycle, database, new SimulatedIndexBuilder(settings), clock));
    if (simulated != null) {
      simulated.resumeHeld(); // an Agent outside core keeps its own Tasks across a restart
    }
    // A Workflow a crash interrupted goes on at its next step: resumed by the holder of the sweep
    // duty, now and whenever a node takes the duty over (a dead node's instances then go on).
    // Simulated Agents die with their node: a node that gains a duty (a dead or leaving node's)
    // resumes every held Task; one already worked on elsewhere only repeats what is done.
    SimulatedAgentRuntime resumable = simulated;
    ownership.listen(
        new DutyListener() {
          @Override
          public void gained(Duty duty, long epoch) {
            if (duty == Duty.SWEEP) {
              workflows.resumeAll();
            }
            if (resumable != null) {
              // Off the ownership's thread, which renews the leases.
              java.util.concurrent.CompletableFuture.runAsync(resumable::resumeHeld);
            }
          }
        });
    if (ownership.owns(Duty.SWEEP)) {
      workflows.resumeAll();
    }
    return new LifecycleConsumers(agents, workflows, workflowThreads);
  }

  @Override
  public void close() {
    agents.close();
    workflows.close();
    workflowThreads.shutdownNow();
  }
}
