package org.rhumbatron.router;

import java.time.Clock;
import java.util.function.Function;
import org.rhumbatron.coordinator.view.ProjectViewActor;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.cluster.OwnsEverything;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.EventLogClient;
import org.rhumbatron.router.archive.ArchiveExpiry;
import org.rhumbatron.router.causal.CausalBatchRouter;
import org.rhumbatron.router.causal.CausalRouterSubscription;
import org.rhumbatron.router.claims.EventClaims;
import org.rhumbatron.router.deadletter.DeadLetterOperator;
import org.rhumbatron.router.maintenance.CommandSink;
import org.rhumbatron.router.maintenance.Maintenance;
import org.rhumbatron.router.projector.ProjectViewProjector;
import org.rhumbatron.router.run.BatchFailures;
import org.rhumbatron.router.run.SubscriptionHandler;
import org.rhumbatron.router.run.SubscriptionRun;

/**
 * What {@link EventRouter#wiring} builds the router from. Without an ownership the node holds every
 * duty (one core); with several cores each stream's runs happen on the holder of its duty and their
 * claims pass its fence, and the maintenance ticks and the archive expiry run on the holder of the
 * sweep duty. The dead letters and the archive expiry serve only the sweep's maintenance and daily
 * ticks: a router that never sweeps (the router bench) may go without them.
 */
public final class EventRouterWiring {
  private EventLogClient eventLog;
  private Database database;
  private Function<String, ProjectViewActor> views;
  private CausalBatchRouter rules;
  private SubscriptionHandler auditArchiver;
  private SubscriptionHandler analyticsProjector;
  private CommandSink commands;
  private DeadLetterOperator deadLetters;
  private ArchiveExpiry archiveExpiry;
  private Clock clock;
  private Settings settings;
  private DutyOwnership ownership = OwnsEverything.single();

  EventRouterWiring() {}

  public EventRouterWiring eventLog(EventLogClient eventLog) {
    this.eventLog = eventLog;
    return this;
  }

  public EventRouterWiring database(Database database) {
    this.database = database;
    return this;
  }

  public EventRouterWiring views(Function<String, ProjectViewActor> views) {
    this.views = views;
    return this;
  }

  public EventRouterWiring rules(CausalBatchRouter rules) {
    this.rules = rules;
    return this;
  }

  public EventRouterWiring auditArchiver(SubscriptionHandler auditArchiver) {
    this.auditArchiver = auditArchiver;
    return this;
  }

  public EventRouterWiring analyticsProjector(SubscriptionHandler analyticsProjector) {
    this.analyticsProjector = analyticsProjector;
    return this;
  }

  public EventRouterWiring commands(CommandSink commands) {
    this.commands = commands;
    return this;
  }

  public EventRouterWiring deadLetters(DeadLetterOperator deadLetters) {
    this.deadLetters = deadLetters;
    return this;
  }

  public EventRouterWiring archiveExpiry(ArchiveExpiry archiveExpiry) {
    this.archiveExpiry = archiveExpiry;
    return this;
  }

  public EventRouterWiring clock(Clock clock) {
    this.clock = clock;
    return this;
  }

  public EventRouterWiring settings(Settings settings) {
    this.settings = settings;
    return this;
  }

  public EventRouterWiring ownership(DutyOwnership ownership) {
    this.ownership = ownership;
    return this;
  }

  /** The router; names the first part missing. */
  public EventRouter wire() {
    require(eventLog, "eventLog");
    require(database, "database");
    require(views, "views");
    require(rules, "rules");
    require(auditArchiver, "auditArchiver");
    require(analyticsProjector, "analyticsProjector");
    require(commands, "commands");
    require(clock, "clock");
    require(settings, "settings");
    require(ownership, "ownership");
    EventClaims claims = new EventClaims(clock, ownership);
    SubscriptionRun run =
        new SubscriptionRun(
            eventLog,
            new BatchFailures(database, claims, clock, settings.get(Settings.BATCH_FAILURE_LIMIT)),
            settings.get(Settings.ROUTER_NACK_DELAY),
            ownership);
    ProjectViewProjector.Factory projector =
        new ProjectViewProjector.Factory(
            database, claims, views, clock, settings.get(Settings.APPLY_DELTA_CALLS_PER_RUN));
    EventRouter.Parts parts =
        new EventRouter.Parts(
            run,
            projector,
            new CausalRouterSubscription(database, claims, rules),
            auditArchiver,
            analyticsProjector,
            new Maintenance(database, commands, deadLetters, settings, ownership),
            archiveExpiry,
            eventLog::backlogs);
    return new EventRouter(parts, clock, settings, ownership);
  }

  private static void require(Object part, String name) {
    if (part == null) {
      throw new IllegalStateException("EventRouter.wiring(): " + name + " is not set");
    }
  }
}
