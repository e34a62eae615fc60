package org.rhumbatron.router.run;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.rhumbatron.platform.eventlog.EventRecord;

/**
 * The steps every claiming subscription takes with a batch, around the effect it plugs in (as
 * eventuate-tram's duplicate-detecting handler): a record that does not decode is malformed (the
 * run dead-letters it at once with its decode error), an event that comes twice goes to the effect
 * once, and what the effect reports becomes the {@link BatchOutcome}, with one error format for
 * all. The effect claims the events it is given ({@code claimEvents}, in the transaction of its
 * effect) and reports which it did not apply; a record is applied, deferred or failed with its
 * event.
 */
public final class ClaimingTemplate {
  static final int MAX_REASONS = 3;

  private static final ClaimingTemplate ALL = new ClaimingTemplate(Integer.MAX_VALUE);

  private final int takeLimit;

  private ClaimingTemplate(int takeLimit) {
    this.takeLimit = takeLimit;
  }

  /** Handles every record of a batch. */
  public static ClaimingTemplate all() {
    return ALL;
  }

  /** Handles the first {@code limit} records of a batch and defers the rest unclaimed. */
  public static ClaimingTemplate taking(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("a batch's take limit must be at least 1, not " + limit);
    }
    return new ClaimingTemplate(limit);
  }

  /** What a subscription does with the events of a batch. */
  @FunctionalInterface
  public interface Effect {
    /**
     * Claims and applies {@code events}: decoded records, one for each event id, in stream order,
     * never empty. Reports the ones it did not apply, their claims released or rolled back; a throw
     * fails every event it was given.
     */
    Report apply(List<EventRecord> events);
  }

  /**
   * What an effect did not apply: records it deferred (they come back with the next delivery) and
   * groups of records that failed together; each record it was given at most once.
   */
  public record Report(List<EventRecord> deferred, List<Failure> failures) {
    private static final Report APPLIED = new Report(List.of(), List.of());

    public Report {
      deferred = List.copyOf(deferred);
      failures = List.copyOf(failures);
    }

    public static Report applied() {
      return APPLIED;
    }

    public static Report failed(String what, List<EventRecord> records, Throwable cause) {
      return new Report(List.of(), List.of(new Failure(what, records, cause)));
    }
  }

  /** Records that failed together, {@code what} naming the step that failed (e.g. "project p1"). */
  public record Failure(String what, List<EventRecord> records, Throwable cause) {
    public Failure {
      Objects.requireNonNull(what, "what");
      records = List.copyOf(records);
      Objects.requireNonNull(cause, "cause");
    }

    String reason() {
      return what + ": " + Objects.requireNonNullElse(cause.getMessage(), cause.toString());
    }
  }

  /**
   * Runs {@code effect} on {@code records} (one fetched batch, in stream order). The records that
   * do not decode never reach the effect and are malformed whatever it does: a throw of the effect
   * fails only the events it was given.
   */
  public BatchOutcome handle(List<EventRecord> records, Effect effect) {
    int taken = Math.min(records.size(), takeLimit);
    List<EventRecord> deferred = new ArrayList<>(records.subList(taken, records.size()));
    List<EventRecord> malformed = new ArrayList<>();
    Map<String, List<EventRecord>> byEvent = new LinkedHashMap<>(); // stream order
    for (EventRecord r : records.subList(0, taken)) {
      if (r.decoded()) {
        byEvent.computeIfAbsent(r.event().eventId(), id -> new ArrayList<>()).add(r);
      } else {
        malformed.add(r);
      }
    }
    Report report = byEvent.isEmpty() ? Report.applied() : apply(effect, byEvent);

    List<EventRecord> failed = new ArrayList<>();
    List<String> reasons = new ArrayList<>();
    List<EventRecord> waiting = new ArrayList<>();
    List<String> unavailable = new ArrayList<>();
    report.deferred().forEach(r -> deferred.addAll(take(byEvent, r)));
    for (Failure f : report.failures()) {
      boolean infrastructure = Unavailable.infrastructure(f.cause());
      f.records().forEach(r -> (infrastructure ? waiting : failed).addAll(take(byEvent, r)));
      (infrastructure ? unavailable : reasons).add(f.reason());
    }
    return new BatchOutcome(
        deferred,
        failed,
        failed.isEmpty() ? null : summary(reasons, "reason"),
        waiting,
        waiting.isEmpty() ? null : summary(unavailable, "reason"),
        malformed);
  }

  /** The effect's report; a throw is a failure of every event it was given. */
  private static Report apply(Effect effect, Map<String, List<EventRecord>> byEvent) {
    List<EventRecord> events = byEvent.values().stream().map(rs -> rs.get(0)).toList();
    try {
      return effect.apply(events);
    } catch (RuntimeException e) {
      return Report.failed(e.getClass().getSimpleName(), events, e);
    }
  }

  /** The records of {@code r}'s event, each handed out once. */
  private static List<EventRecord> take(Map<String, List<EventRecord>> byEvent, EventRecord r) {
    List<EventRecord> records = r.decoded() ? byEvent.remove(r.event().eventId()) : null;
    if (records == null) {
      throw new IllegalStateException(
          "the effect reported a record it was not given, or one twice: stream sequence "
              + r.streamSequence());
    }
    return records;
  }

  /**
   * The first few reasons and a count of the rest, each of them a {@code what}, so a batch of 100
   * failures stays one line.
   */
  public static String summary(List<String> reasons, String what) {
    if (reasons.size() <= MAX_REASONS) {
      return String.join("; ", reasons);
    }
    int more = reasons.size() - MAX_REASONS;
    return String.join("; ", reasons.subList(0, MAX_REASONS))
        + "; and "
        + more
        + " more "
        + what
        + (more == 1 ? "" : "s");
  }
}
