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
 * redelivered batch (its events claimed already) counts nothing. A dropped command is logged as an
 * error and counted as {@code causal_command_dropped} in METRICS.
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
    Map<String, List<Command>> capped = new LinkedHashMap<>();
    for (Command c : commands) {
      if (c.commandType().countsTowardChangeCap() && c.changeId() != null) {
        capped.computeIfAbsent(c.changeId(), k -> new ArrayList<>()).add(c);
      }
    }
    if (capped.isEmpty()) {
      return commands;
    }
    String day = LocalDate.ofInstant(clock.instant(), ZoneOffset.UTC).toString();
    List<Command> dropped = new ArrayList<>();
    for (var entry : capped.entrySet()) {
      List<Command> ofChange = entry.getValue();
      int allowed = reserve(tx, entry.getKey(), day, ofChange.size());
      dropped.addAll(ofChange.subList(allowed, ofChange.size()));
    }
    if (dropped.isEmpty()) {
      return commands;
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
    Set<Command> out = Collections.newSetFromMap(new IdentityHashMap<>());
    out.addAll(dropped);
    return commands.stream().filter(c -> !out.contains(c)).toList();
  }

  /**
   * Adds up to {@code wanted} commands to the Change's count of {@code day}; returns how many fit.
   * The UPDATE comes first so that on PostgreSQL it locks the row against a concurrent batch.
   */
  private int reserve(Tx tx, String changeId, String day, int wanted) throws SQLException {
    tx.update(
        "INSERT INTO causal_command_counts (change_id, day_utc, commands) VALUES (?, ?, 0)"
            + " ON CONFLICT DO NOTHING",
        changeId,
        day);
    tx.update(
        "UPDATE causal_command_counts SET commands = commands + ? WHERE change_id = ?"
            + " AND day_utc = ?",
        wanted,
        changeId,
        day);
    long total =
        tx.queryLong(
            "SELECT commands FROM causal_command_counts WHERE change_id = ? AND day_utc = ?",
            changeId,
            day);
    long before = total - wanted;
    int allowed = (int) Math.max(0, Math.min(wanted, perChangePerDay - before));
    if (allowed < wanted) {
      tx.update(
          "UPDATE causal_command_counts SET commands = ? WHERE change_id = ? AND day_utc = ?",
          before + allowed,
          changeId,
          day);
    }
    return allowed;
  }

  /** The router commands counted for the Change on the current UTC day. */
  public long countToday(Tx tx, String changeId) throws SQLException {
    String day = LocalDate.ofInstant(clock.instant(), ZoneOffset.UTC).toString();
    return tx.queryFirst(
            "SELECT commands FROM causal_command_counts WHERE change_id = ? AND day_utc = ?",
            rs -> rs.getLong(1),
            changeId,
            day)
        .orElse(0L);
  }
}
