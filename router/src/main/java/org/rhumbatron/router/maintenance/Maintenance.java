package org.rhumbatron.router.maintenance;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.rhumbatron.coordinator.project.ProjectStatus;
import org.rhumbatron.lifecycle.MaintenanceDue;
import org.rhumbatron.lifecycle.MaintenanceDue.DueChange;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.cluster.OwnsEverything;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.router.deadletter.DeadLetterOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The seed's "Sweep housekeeping" table. Each job queries with its cap and sends one Command per
 * row; command ids are stable per day (daily tick) or per tick minute, so a tick that runs twice (a
 * restart within the minute) is dropped by the queue's duplicate window. Both ticks then run the
 * {@link Retention} purges to completion, the commands sent first so that a slow purge does not
 * hold them.
 */
public final class Maintenance {
  private static final Logger log = LoggerFactory.getLogger(Maintenance.class);

  // The seed caps every housekeeping job; closing dead letters gets a bound of the same kind.
  private static final int DEAD_LETTERS_CLOSED_PER_SWEEP = 1_000;

  private final Database database;
  private final MaintenanceDue due;
  private final CommandSink commands;
  private final DeadLetterOperator deadLetters;
  private final Settings settings;
  private final Retention retention;

  public Maintenance(
      Database database, CommandSink commands, DeadLetterOperator deadLetters, Settings settings) {
    this(database, commands, deadLetters, settings, OwnsEverything.single());
  }

  /**
   * With several cores: the ticks run their jobs on the holder of the sweep duty only (the caller
   * checks), and each purge batch passes its fence.
   */
  public Maintenance(
      Database database,
      CommandSink commands,
      DeadLetterOperator deadLetters,
      Settings settings,
      DutyOwnership ownership) {
    this.database = database;
    this.due = new MaintenanceDue(database);
    this.commands = commands;
    this.deadLetters = deadLetters;
    this.settings = settings;
    this.retention = new Retention(database, settings, ownership);
  }

  /**
   * 04:17 UTC, once a day: one forks.sweep; project.cleanup and index.purge for up to 10 archived
   * Projects; an index.build backfill for up to 10 active Projects without a ready index; deletes
   * every processed_events row older than 14 days, 5,000 per transaction, and the rows of the other
   * tables past their horizons.
   */
  public MaintenanceReport runDaily(Instant tick) {
    String day = LocalDate.ofInstant(tick, ZoneOffset.UTC).toString();
    int projects = settings.get(Settings.DAILY_PROJECTS_MAX);
    List<Command> out = new ArrayList<>();
    out.add(command("cmd_forks.sweep_" + day, CommandType.FORKS_SWEEP, null, null, tick));
    for (String p : due.archivedProjects(projects)) {
      out.add(
          command(
              "cmd_project.cleanup_" + p + "_" + day, CommandType.PROJECT_CLEANUP, p, null, tick));
      out.add(command("cmd_index.purge_" + p + "_" + day, CommandType.INDEX_PURGE, p, null, tick));
    }
    for (String p :
        projectIds(
            "SELECT project_id FROM projects p WHERE status = ? AND NOT EXISTS"
                + " (SELECT 1 FROM project_indexes i WHERE i.project_id = p.project_id"
                + " AND i.state = 'ready') ORDER BY created_at_ms, project_id LIMIT "
                + projects,
            ProjectStatus.ACTIVE)) {
      out.add(
          command(
              "cmd_index.build_" + p + "_backfill_" + day, CommandType.INDEX_BUILD, p, null, tick));
    }
    return sendAndPurge(out, 0, tick);
  }

  /**
   * Minute 4, 9, 14 ...: release.recover for Changes still releasing 45 minutes after promotion
   * (max 10); change.settle for open Changes quiet 3 minutes to 6 hours that cannot move on their
   * own (max 10); closes the dead letters of ended Changes; index.purge for deleted Projects that
   * still have index rows (max 10). Beyond the seed it purges as the daily tick does, so that each
   * purge deletes a few minutes of rows, not a day of them in one burst at 04:17.
   */
  public MaintenanceReport runReleaseSweep(Instant tick) {
    long now = tick.toEpochMilli();
    long minute = tick.getEpochSecond() / 60;
    List<Command> out = new ArrayList<>();
    long promotedBefore = now - settings.get(Settings.RELEASE_RECOVER_AFTER).toMillis();
    for (DueChange c :
        due.releasingSince(promotedBefore, settings.get(Settings.RELEASE_RECOVER_MAX))) {
      out.add(
          command(
              "cmd_release.recover_" + c.changeId() + "_" + minute,
              CommandType.RELEASE_RECOVER,
              c.projectId(),
              c.changeId(),
              tick));
    }
    for (DueChange c :
        due.quietAndUnheld(
            now - settings.get(Settings.SETTLE_QUIET_MIN).toMillis(),
            now - settings.get(Settings.SETTLE_QUIET_MAX).toMillis(),
            settings.get(Settings.SETTLE_MAX))) {
      out.add(
          command(
              "cmd_" + c.changeId() + "_settle_" + minute,
              CommandType.CHANGE_SETTLE,
              c.projectId(),
              c.changeId(),
              tick));
    }
    int closed = deadLetters.closeForEndedChanges(DEAD_LETTERS_CLOSED_PER_SWEEP);
    for (String p :
        projectIds(
            "SELECT project_id FROM projects p WHERE status = ? AND EXISTS"
                + " (SELECT 1 FROM project_indexes i WHERE i.project_id = p.project_id)"
                + " ORDER BY deleted_at_ms, project_id LIMIT "
                + settings.get(Settings.INDEX_PURGE_MAX),
            ProjectStatus.DELETED)) {
      out.add(
          command("cmd_index.purge_" + p + "_" + minute, CommandType.INDEX_PURGE, p, null, tick));
    }
    return sendAndPurge(out, closed, tick);
  }

  /** Sends {@code due}, then purges every table past its horizon (each tick: see the class). */
  private MaintenanceReport sendAndPurge(List<Command> due, int closed, Instant tick) {
    List<Command> sent = new ArrayList<>();
    List<Command> failed = new ArrayList<>();
    for (Command c : due) {
      try {
        commands.send(c);
        sent.add(c);
      } catch (RuntimeException e) {
        failed.add(c);
        log.warn(
            "maintenance could not send {} {}: {}",
            c.commandType().wireName(),
            c.commandId(),
            e.toString());
      }
    }
    return new MaintenanceReport(sent, failed, retention.purge(tick), closed);
  }

  // Joins projects with project_indexes, which the indexer writes: a layer beside the router's,
  // with no read API the router may call, so neither owner can answer the join alone.
  private List<String> projectIds(String sql, ProjectStatus status) {
    return database.read(tx -> tx.query(sql, rs -> rs.getString(1), status.dbName()));
  }

  private static Command command(
      String id, CommandType type, String projectId, String changeId, Instant tick) {
    ObjectNode payload = JsonNodeFactory.instance.objectNode();
    payload.put("reason", "maintenance");
    return new Command(id, type, projectId, changeId, null, 1, tick, null, payload);
  }
}
