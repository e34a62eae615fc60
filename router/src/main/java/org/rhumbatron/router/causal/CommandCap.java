package org.rhumbatron.router.causal;

import java.sql.SQLException;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.platform.metrics.Metrics;
import org.rhumbatron.protocol.Command;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The seed's cap of {@code causal.commands-per-change-per-day} (1,000) router commands per Change
 * per UTC day, counting the types of {@code CommandType.countsTowardChangeCap()} ({@code
 * change.dispatch}, {@code candidate.create}, {@code change.settle}, {@code agent.wake}). The count
 * is a row per Change and day written in the claiming transaction: it survives a restart, and a
 * redelivered batch (its events claimed already) counts nothing. One stream's lane routes all of a
 * Change's Events, so the count read when a route is planned still holds when it is written. A
 * dropped command is logged as an error and counted as {@code causal_command_dropped} in METRICS.
 */
public final class CommandCap {
  public static final String DROPPED = "causal_command_dropped";

  private static final Logger log = LoggerFactory.getLogger(CommandCap.class);

  private final int perChangePerDay;
  private final Clock clock;
  private final Metrics metrics;

  public CommandCap(int perChangePerDay, Clock clock, Metrics metrics) {
    this.perChangePerDay = perChangePerDay;
    this.clock = clock;
    this.metrics = metrics;
  }

  /** The commands of {@code commands} within the cap, in order; counts the admitted ones. */
  public List<Command> admit(Tx tx, List<Command> commands) throws SQLException {
    Admission admission = plan(tx, commands);
    admission.record(tx);
    return admission.admitted();
  }

  /**
   * What the cap admits of {@code commands}, read from the counts in {@code tx} (a read is enough):
   * the admitted ones in order, and what {@link Admission#record} adds to the counts.
   */
  public Admission plan(Tx tx, List<Command> commands) throws SQLException {
    Map<String, List<Command>> capped = new LinkedHashMap<>();
    for (Command c : commands) {
      if (c.commandType().countsTowardChangeCap() && c.changeId() != null) {
        capped.computeIfAbsent(c.changeId(), k -> new ArrayList<>()).add(c);
      }
    }
    String day = LocalDate.ofInstant(clock.instant(), ZoneOffset.UTC).toString();
    if (capped.isEmpty()) {
      return new Admission(commands, Map.of(), List.of(), day);
    }
    Map<String, Integer> counted = new LinkedHashMap<>();
    List<Command> dropped = new ArrayList<>();
    for (var entry : capped.entrySet()) {
      List<Command> ofChange = entry.getValue();
      long before = countOn(tx, entry.getKey(), day);
      int allowed = (int) Math.max(0, Math.min(ofChange.size(), perChangePerDay - before));
      counted.put(entry.getKey(), allowed);
      dropped.addAll(ofChange.subList(allowed, ofChange.size()));
    }
    if (dropped.isEmpty()) {
      return new Admission(commands, counted, List.of(), day);
    }
    Set<Command> out = Collections.newSetFromMap(new IdentityHashMap<>());
    out.addAll(dropped);
    return new Admission(
        commands.stream().filter(c -> !out.contains(c)).toList(), counted, dropped, day);
  }

  /**
   * The commands the cap admits, and per Change how many of them count on {@code day}; {@code
   * dropped} are over the cap.
   */
  public final class Admission {
    private final List<Command> admitted;
    private final Map<String, Integer> counted;
    private final List<Command> dropped;
    private final String day;

    private Admission(
        List<Command> admitted, Map<String, Integer> counted, List<Command> dropped, String day) {
      this.admitted = admitted;
      this.counted = counted;
      this.dropped = dropped;
      this.day = day;
    }

    public List<Command> admitted() {
      return admitted;
    }

    /** Adds the admitted commands to their Changes' counts; logs and counts the dropped ones. */
    public void record(Tx tx) throws SQLException {
      for (var entry : counted.entrySet()) {
        tx.update(
            "INSERT INTO causal_command_counts (change_id, day_utc, commands) VALUES (?, ?, 0)"
                + " ON CONFLICT DO NOTHING",
            entry.getKey(),
            day);
        tx.update(
            "UPDATE causal_command_counts SET commands = commands + ? WHERE change_id = ?"
                + " AND day_utc = ?",
            entry.getValue(),
            entry.getKey(),
            day);
      }
      for (Command c : dropped) {
        log.error(
            "causal cap: dropped {} {} of change {}: it had {} router commands on {} (UTC)",
            c.commandType().wireName(),
            c.commandId(),
            c.changeId(),
            perChangePerDay,
            day);
        metrics.record(
            tx,
            DROPPED,
            1,
            Map.of(
                "command_type", c.commandType().wireName(),
                "command_id", c.commandId(),
                "change_id", c.changeId(),
                "day", day));
      }
    }
  }

  /** The router commands counted for the Change on the current UTC day. */
  public long countToday(Tx tx, String changeId) throws SQLException {
    return countOn(tx, changeId, LocalDate.ofInstant(clock.instant(), ZoneOffset.UTC).toString());
  }

  private static long countOn(Tx tx, String changeId, String day) throws SQLException {
    return tx.queryFirst(
            "SELECT commands FROM causal_command_counts WHERE change_id = ? AND day_utc = ?",
            rs -> rs.getLong(1),
            changeId,
            day)
        .orElse(0L);
  }
}
