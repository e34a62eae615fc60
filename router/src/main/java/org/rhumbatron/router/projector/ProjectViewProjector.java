package org.rhumbatron.router.projector;

import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import org.rhumbatron.coordinator.view.EventPosition;
import org.rhumbatron.coordinator.view.ProjectViewActor;
import org.rhumbatron.platform.concurrent.Futures;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.router.claims.EventClaims;
import org.rhumbatron.router.run.BatchOutcome;
import org.rhumbatron.router.run.ClaimingTemplate;
import org.rhumbatron.router.run.SubscriptionHandler;

/**
 * The project-view-projector of one run (a nudge or a sweep tick): one {@code applyDelta} call per
 * project with fresh events, at most 15 calls per run; the events of the projects beyond the cap
 * are deferred and come back with the next delivery. Make a new one per run ({@link
 * Factory#forRun}), since the cap counts per run.
 */
public final class ProjectViewProjector implements SubscriptionHandler {
  private static final String CONSUMER = Subscription.PROJECT_VIEW_PROJECTOR.durableName();
  private static final String FEED_ROW =
      "INSERT INTO project_events (project_id, event_id, event_type, change_id, task_id,"
          + " stream_index, stream_seq, occurred_at_ms, event, recorded_at_ms)"
          + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

  /** Makes the projector of each run, with the run's own applyDelta budget. */
  public record Factory(
      Database database,
      EventClaims claims,
      Function<String, ProjectViewActor> views,
      Clock clock,
      int callsPerRun) {
    public ProjectViewProjector forRun() {
      return new ProjectViewProjector(this);
    }
  }

  private final Factory f;
  private int callsLeft;

  private ProjectViewProjector(Factory factory) {
    this.f = factory;
    this.callsLeft = factory.callsPerRun();
  }

  @Override
  public Subscription subscription() {
    return Subscription.PROJECT_VIEW_PROJECTOR;
  }

  /** applyDelta calls this run may still make. */
  public int callsLeft() {
    return callsLeft;
  }

  @Override
  public BatchOutcome handle(int streamIndex, List<EventRecord> records) {
    return ClaimingTemplate.all().handle(records, events -> applyDeltas(streamIndex, events));
  }

  /**
   * One applyDelta call per project with fresh events while the run's budget lasts; a project fails
   * or is deferred as a whole.
   */
  private ClaimingTemplate.Report applyDeltas(int streamIndex, List<EventRecord> records) {
    Map<String, List<EventRecord>> byProject = new LinkedHashMap<>();
    for (EventRecord r : records) {
      byProject.computeIfAbsent(r.event().projectId(), p -> new ArrayList<>()).add(r);
    }
    Set<String> withFresh = projectsWithFreshEvents(byProject);
    List<EventRecord> deferred = new ArrayList<>();
    Map<String, CompletableFuture<Integer>> calls = new LinkedHashMap<>();
    for (var entry : byProject.entrySet()) {
      if (!withFresh.contains(entry.getKey())) {
        continue; // every event of this project is a duplicate: applied, no call spent
      }
      if (callsLeft == 0) {
        deferred.addAll(entry.getValue());
        continue;
      }
      callsLeft--;
      calls.put(entry.getKey(), applyDelta(streamIndex, entry.getKey(), entry.getValue()));
    }
    List<ClaimingTemplate.Failure> failures = new ArrayList<>();
    for (var call : calls.entrySet()) {
      try {
        call.getValue().join();
      } catch (CompletionException e) {
        failures.add(
            new ClaimingTemplate.Failure(
                "project " + call.getKey(), byProject.get(call.getKey()), Futures.unwrap(e)));
      }
    }
    return new ClaimingTemplate.Report(deferred, failures);
  }

  private CompletableFuture<Integer> applyDelta(
      int streamIndex, String projectId, List<EventRecord> records) {
    Map<String, EventRecord> byId = new HashMap<>();
    Map<String, EventPosition> positions = new HashMap<>();
    List<Event> events = new ArrayList<>(records.size());
    for (EventRecord r : records) {
      byId.put(r.event().eventId(), r);
      positions.put(r.event().eventId(), new EventPosition(r.outboxSeq(), r.streamSequence()));
      events.add(r.event());
    }
    try {
      return f.views()
          .apply(projectId)
          .applyDelta(events, positions, (tx, all) -> claimWithFeed(tx, streamIndex, all, byId));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * claimEvents, plus a feed row for each fresh event, inside the view's transaction: the claim
   * keeps the feed at one row per event.
   */
  private List<Event> claimWithFeed(
      Tx tx, int streamIndex, List<Event> events, Map<String, EventRecord> byId)
      throws SQLException {
    List<Event> fresh = f.claims().claimFresh(tx, streamIndex, CONSUMER, events);
    long now = f.clock().millis();
    List<Object[]> feed = new ArrayList<>(fresh.size());
    for (Event e : fresh) {
      EventRecord r = byId.get(e.eventId());
      feed.add(
          new Object[] {
            e.projectId(),
            e.eventId(),
            e.eventType().wireName(),
            e.changeId(),
            e.taskId(),
            streamIndex,
            r.streamSequence(),
            e.timestamp().toEpochMilli(),
            new String(r.data(), StandardCharsets.UTF_8),
            now
          });
    }
    tx.updateBatch(FEED_ROW, feed);
    return fresh;
  }

  /** The projects of the batch that have at least one event not yet claimed by the projector. */
  private Set<String> projectsWithFreshEvents(Map<String, List<EventRecord>> byProject) {
    List<String> ids = new ArrayList<>();
    byProject.values().forEach(rs -> rs.forEach(r -> ids.add(r.event().eventId())));
    Set<String> claimed = f.claims().claimedAmong(f.database(), CONSUMER, ids);
    Set<String> projects = new HashSet<>();
    byProject.forEach(
        (project, rs) -> {
          for (EventRecord r : rs) {
            if (!claimed.contains(r.event().eventId())) {
              projects.add(project);
              return;
            }
          }
        });
    return projects;
  }
}
