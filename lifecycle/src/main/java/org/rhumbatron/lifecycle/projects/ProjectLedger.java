package org.rhumbatron.lifecycle.projects;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.rhumbatron.coordinator.outbox.OutboxActor.Appender;
import org.rhumbatron.coordinator.project.ProjectFlags;
import org.rhumbatron.coordinator.project.ProjectStatus;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;

/**
 * A Project's flags that the seed leaves to a ResourceShard (archived, deleted, live app): the
 * rules and the Events, in a transaction of the shard that owns {@code project:<id>}; the row
 * itself is written by the root's {@link ProjectFlags}. A repeat writes nothing; the Events have
 * random ids (the shard's own transactions).
 */
public final class ProjectLedger {
  private final Clock clock;

  public ProjectLedger(Clock clock) {
    this.clock = clock;
  }

  private static final String PROJECT =
      "SELECT project_id, tenant_id, name, status, canonical_generation, has_live_app"
          + " FROM projects";

  public static Optional<ProjectInfo> project(Tx tx, String projectId) throws SQLException {
    return tx.queryFirst(PROJECT + " WHERE project_id = ?", ProjectLedger::projectRow, projectId);
  }

  /** Projects in id order, those of one status when {@code status} is not null. */
  public static List<ProjectInfo> projects(Tx tx, String status, int limit) throws SQLException {
    String order = " ORDER BY project_id LIMIT " + limit;
    return status == null
        ? tx.query(PROJECT + order, ProjectLedger::projectRow)
        : tx.query(PROJECT + " WHERE status = ?" + order, ProjectLedger::projectRow, status);
  }

  private static ProjectInfo projectRow(ResultSet rs) throws SQLException {
    return new ProjectInfo(
        rs.getString(1),
        rs.getString(2),
        rs.getString(3),
        ProjectStatus.fromDb(rs.getString(4)),
        rs.getLong(5),
        rs.getInt(6) == 1);
  }

  /** active → archived ({@code project.archived}); false when it is archived already. */
  boolean archive(Tx tx, Appender out, String writer, String projectId) throws SQLException {
    ProjectInfo p = require(tx, projectId);
    if (p.status() != ProjectStatus.ACTIVE) {
      if (p.status() == ProjectStatus.ARCHIVED) {
        return false;
      }
      throw LifecycleException.projectNotActive(projectId, p.status().dbName());
    }
    ProjectFlags.archive(tx, projectId, clock.millis());
    out.append(event(p, EventType.PROJECT_ARCHIVED, writer, null));
    return true;
  }

  /** active or archived → deleted ({@code project.deleted}); false when it is deleted already. */
  boolean delete(Tx tx, Appender out, String writer, String projectId) throws SQLException {
    ProjectInfo p = require(tx, projectId);
    if (p.status() == ProjectStatus.DELETED) {
      return false;
    }
    ProjectFlags.delete(tx, projectId, clock.millis());
    out.append(event(p, EventType.PROJECT_DELETED, writer, null));
    return true;
  }

  /**
   * Sets whether the Project has a live app ({@code app.provisioned} / {@code app.removed}); false
   * when it had that value already. Only an active Project takes an app.
   */
  boolean setLiveApp(
      Tx tx, Appender out, String writer, String projectId, boolean live, String causedBy)
      throws SQLException {
    ProjectInfo p = require(tx, projectId);
    if (p.hasLiveApp() == live) {
      return false;
    }
    if (live && p.status() != ProjectStatus.ACTIVE) {
      throw LifecycleException.projectNotActive(projectId, p.status().dbName());
    }
    ProjectFlags.setLiveApp(tx, projectId, live, clock.millis());
    out.append(
        event(p, live ? EventType.APP_PROVISIONED : EventType.APP_REMOVED, writer, causedBy));
    return true;
  }

  private static ProjectInfo require(Tx tx, String projectId) throws SQLException {
    return project(tx, projectId).orElseThrow(() -> LifecycleException.unknownProject(projectId));
  }

  private Event event(ProjectInfo p, EventType type, String writer, String causedBy) {
    Instant now = clock.instant();
    String id = StableIds.randomEventId(now);
    return Event.builder()
        .eventId(id)
        .eventType(type)
        .tenantId(p.tenantId())
        .projectId(p.projectId())
        .actor(writer)
        .canonicalGeneration(p.canonicalGeneration())
        .causedBy(causedBy)
        .correlationId(causedBy == null ? id : causedBy)
        .timestamp(now)
        .build();
  }
}
