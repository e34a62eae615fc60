package org.rhumbatron.coordinator.view;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.coordinator.actor.Actor;
import org.rhumbatron.coordinator.actor.ActorContext;
import org.rhumbatron.coordinator.actor.ActorType;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;

/**
 * One per project: the read model that the API and dashboard show (the seed's {@code
 * ProjectViewDO}). Its rows are {@code project_views} and {@code project_view_items}; it keeps
 * nothing in memory, so it unloads and loads like any actor.
 */
public final class ProjectViewActor extends Actor {
  public static final String ACTOR_CLASS = "project-view";

  // An item keeps the state of its newest Event: by outbox seq (the writer's commit order) when
  // both Events carry one, else by stream sequence, else the last applied wins. An older Event
  // applied later (a redelivery, a resend after a lost tail) changes nothing.
  private static final String UPSERT_ITEM =
      "INSERT INTO project_view_items"
          + " (project_id, kind, item_id, state, change_id, last_event_id, updated_at_ms,"
          + " stream_seq, outbox_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
          + " ON CONFLICT (project_id, kind, item_id) DO UPDATE SET state = excluded.state,"
          + " change_id = COALESCE(excluded.change_id, project_view_items.change_id),"
          + " last_event_id = excluded.last_event_id, updated_at_ms = excluded.updated_at_ms,"
          + " stream_seq = excluded.stream_seq, outbox_seq = excluded.outbox_seq"
          + " WHERE CASE WHEN excluded.outbox_seq IS NOT NULL"
          + " AND project_view_items.outbox_seq IS NOT NULL"
          + " THEN excluded.outbox_seq >= project_view_items.outbox_seq"
          + " ELSE excluded.stream_seq IS NULL OR project_view_items.stream_seq IS NULL"
          + " OR excluded.stream_seq >= project_view_items.stream_seq END";

  private static final String UPSERT_VIEW =
      "INSERT INTO project_views (project_id, events_applied, canonical_generation, last_event_id,"
          + " last_event_type, last_event_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)"
          + " ON CONFLICT (project_id) DO UPDATE SET"
          + " events_applied = project_views.events_applied + excluded.events_applied,"
          + " canonical_generation = CASE WHEN project_views.canonical_generation IS NULL"
          + " OR excluded.canonical_generation > project_views.canonical_generation"
          + " THEN COALESCE(excluded.canonical_generation, project_views.canonical_generation)"
          + " ELSE project_views.canonical_generation END,"
          + " last_event_id = excluded.last_event_id, last_event_type = excluded.last_event_type,"
          + " last_event_at_ms = excluded.last_event_at_ms, updated_at_ms = excluded.updated_at_ms";

  /**
   * Picks, inside the delta's transaction, the events that are fresh for the caller (the projector
   * claims them there, so the claim commits or rolls back with the view's rows).
   */
  @FunctionalInterface
  public interface Claim {
    List<Event> fresh(Tx tx, List<Event> events) throws SQLException;
  }

  public ProjectViewActor(ActorContext context) {
    super(context);
  }

  public static ActorType<ProjectViewActor> type() {
    return new ActorType<>(ACTOR_CLASS, ProjectViewActor::new);
  }

  public String projectId() {
    return address().actorId();
  }

  /**
   * The seed's {@code applyDelta}: claims {@code events} (all of this project, in stream order)
   * with {@code claim} and applies the fresh ones, in one transaction on this actor's lane. Returns
   * how many were fresh. Fails with {@link ProjectionException} when one cannot be applied; then
   * nothing of the delta (claims included) is written. {@code positions}: each Event's {@link
   * EventPosition}, by event id; an item keeps the state of its newest Event by that position,
   * whatever order the Events are applied in.
   */
  public CompletableFuture<Integer> applyDelta(
      List<Event> events, Map<String, EventPosition> positions, Claim claim) {
    for (Event e : events) {
      if (!e.projectId().equals(projectId())) {
        throw new IllegalArgumentException(
            "event " + e.eventId() + " of project " + e.projectId() + " sent to " + projectId());
      }
    }
    return transact(
        tx -> {
          List<Event> fresh = claim.fresh(tx, events);
          if (fresh.isEmpty()) {
            return 0;
          }
          long now = clock().millis();
          Long generation = null;
          List<Object[]> items = new ArrayList<>();
          for (Event e : fresh) {
            for (var item : List.of(ViewItem.of(e), ViewItem.agentOf(e))) {
              item.ifPresent(
                  i -> items.add(itemRow(i, e.eventId(), positions.get(e.eventId()), now)));
            }
            if (e.canonicalGeneration() != null && e.eventType() == EventType.CANONICAL_ADVANCED) {
              generation = e.canonicalGeneration();
            }
          }
          tx.updateBatch(UPSERT_ITEM, items);
          Event last = fresh.get(fresh.size() - 1);
          tx.update(
              UPSERT_VIEW,
              projectId(),
              fresh.size(),
              generation,
              last.eventId(),
              last.eventType().wireName(),
              last.timestamp().toEpochMilli(),
              now);
          return fresh.size();
        });
  }

  private Object[] itemRow(ViewItem item, String eventId, EventPosition position, long now) {
    return new Object[] {
      projectId(),
      item.kind(),
      item.itemId(),
      item.state(),
      item.changeId(),
      eventId,
      now,
      position == null ? null : position.streamSeq(),
      position == null ? null : position.outboxSeq()
    };
  }
}
