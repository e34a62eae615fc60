package org.rhumbatron.lifecycle;

import java.time.Clock;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.coordinator.shard.ShardAlarmWork;
import org.rhumbatron.lifecycle.candidates.Approvals;
import org.rhumbatron.lifecycle.candidates.Candidates;
import org.rhumbatron.lifecycle.changes.ChangeDispatcher;
import org.rhumbatron.lifecycle.changes.ChangeEnds;
import org.rhumbatron.lifecycle.changes.ChangeSettler;
import org.rhumbatron.lifecycle.changes.Changes;
import org.rhumbatron.lifecycle.claims.ResourceLedger;
import org.rhumbatron.lifecycle.projects.ProjectLedger;
import org.rhumbatron.lifecycle.projects.Projects;
import org.rhumbatron.lifecycle.routes.ModelRoutes;
import org.rhumbatron.lifecycle.tasks.AgentReports;
import org.rhumbatron.lifecycle.tasks.TaskReports;
import org.rhumbatron.lifecycle.tasks.TaskTokens;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.secrets.SigningKeys;

/**
 * The Change lifecycle's object graph, built once, and its entry points by aggregate: {@link
 * #projects}, {@link #changes} and their {@link #ends}, the Candidates' {@link #approvals}, the
 * Agents' reports on their Tasks and claims ({@link #agents}), the {@link #commands} it sends, and
 * the reads of {@link #candidates}. Each entry point also answers the reads of its aggregate. Every
 * state change runs on the actor that owns it ({@link LifecycleShards}), in one transaction with
 * its Events. The project and app commands go on the integration queue (the seed's api →
 * integration arrow) and their handlers call back here.
 */
public final class Lifecycle {
  private final Candidates candidates;
  private final LifecycleCommands commands;
  private final Projects projects;
  private final Changes changes;
  private final ChangeEnds ends;
  private final Approvals approvals;
  private final AgentReports agents;
  private final TaskTokens taskTokens;

  public Lifecycle(Coordinator coordinator, Commands commands, Clock clock, Settings settings) {
    Database database = coordinator.database();
    LifecycleShards shards = new LifecycleShards(coordinator);
    this.commands = new LifecycleCommands(commands, clock);
    ChangeDispatcher dispatcher = new ChangeDispatcher(clock, settings);
    this.changes = new Changes(shards, database, dispatcher, settings);
    ChangeSettler settler = new ChangeSettler(clock, settings, dispatcher);
    ResourceLedger resources = new ResourceLedger(clock, settings.get(Settings.CLAIM_TTL));
    this.ends = new ChangeEnds(shards, database, settler, resources);
    this.projects = new Projects(coordinator, shards, changes, ends, new ProjectLedger(clock));
    this.candidates = new Candidates(database);
    this.approvals =
        new Approvals(
            coordinator,
            commands,
            this.commands,
            shards,
            changes,
            candidates,
            ends,
            projects,
            settler,
            clock);
    this.agents =
        new AgentReports(
            shards, new TaskReports(clock), resources, new ModelRoutes(clock), database);
    this.taskTokens =
        new TaskTokens(
            new SigningKeys(coordinator.database(), clock),
            clock,
            settings.get(Settings.TASK_TOKEN_MAX_AGE),
            settings.get(Settings.TASK_TOKEN_KEY_ROTATION));
  }

  /** What a shard's alarm does for the lifecycle (claim expiry); give it to the Coordinator. */
  public static ShardAlarmWork shardAlarmWork(Clock clock, Settings settings) {
    return new ResourceLedger(clock, settings.get(Settings.CLAIM_TTL));
  }

  /** Projects: creation by the root, the archived, deleted and live-app flags. */
  public Projects projects() {
    return projects;
  }

  /** Changes: creation, forks, change.dispatch. */
  public Changes changes() {
    return changes;
  }

  /** The end of a Change (cancel, fail, ...) and change.settle. */
  public ChangeEnds ends() {
    return ends;
  }

  /** Candidates and releases: composition, verdicts, approval, decline, staleness. */
  public Approvals approvals() {
    return approvals;
  }

  /** What Agents report on the Tasks they hold: progress, intents, claims, model routes. */
  public AgentReports agents() {
    return agents;
  }

  /** The commands the lifecycle builds and sends. */
  public LifecycleCommands commands() {
    return commands;
  }

  /** The signer and checker of the task tokens Agents report with. */
  public TaskTokens taskTokens() {
    return taskTokens;
  }

  /** Candidates and releases as other modules read them. */
  public Candidates candidates() {
    return candidates;
  }
}
