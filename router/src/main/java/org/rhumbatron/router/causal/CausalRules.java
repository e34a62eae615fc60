package org.rhumbatron.router.causal;

import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.rhumbatron.lifecycle.HeldWork;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.claims.ActiveScopes;
import org.rhumbatron.lifecycle.routes.ModelRouted;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.platform.metrics.MetricsBinding;
import org.rhumbatron.platform.metrics.PlatformMetrics;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The seed's rules of {@code routeCausalBatch}, in the seed's order ({@link CausalCommands#of} for
 * the lifecycle Events; resource Events wake the Agents whose scopes they overlap, a prefix-only
 * overlap asking the {@link PrefixOverlapJudge} first). Choices the seed leaves open:
 *
 * <ul>
 *   <li>A batch wakes each Task attempt once, for its first Event that wakes it, so overlapping
 *       Events of one batch do not spend the Change's cap on wakes the Agent handles as one.
 *   <li>A wake goes only to a Task its Agent still holds in an open Change, read in the claiming
 *       transaction; a wake whose earlier wake still waits in the queue is held back ({@link
 *       PendingWakes}).
 *   <li>Command ids derive from the Event. The route is planned in a read, its commands go out and
 *       are waited for, and only then does the claiming transaction write the claims and the cap's
 *       counts: a failed send leaves the Events unclaimed, the redelivery sends the same ids (the
 *       queue drops the repeats), and no write transaction waits for the queue. Every command
 *       passes the {@link CommandCap} first.
 * </ul>
 */
public final class CausalRules implements CausalBatchRouter {
  private static final Logger log = LoggerFactory.getLogger(CausalRules.class);
  private static final Duration SEND_TIMEOUT = Duration.ofSeconds(10);
  // Clef-flash questions of one batch asked at the same time.
  private static final int QUESTIONS_AT_ONCE = 8;

  private final Function<Command, CompletableFuture<?>> commands;
  private final Lifecycle lifecycle;
  private final PrefixOverlapJudge judge;
  private final CommandCap cap;
  private final PendingWakes pending;
  private final CausalCommands causal;
  private final ExecutorService questions =
      Executors.newFixedThreadPool(QUESTIONS_AT_ONCE, DaemonThreads.named("clef-flash"));

  /**
   * {@code commands}: core's {@code commands.send}; {@code lifecycle}: where active scopes are read
   * and Clef-flash decisions recorded; {@code judge}: Clef-flash; with the default {@code
   * causal.wake-pending-window}.
   */
  public CausalRules(
      Function<Command, CompletableFuture<?>> commands,
      Clock clock,
      Lifecycle lifecycle,
      PrefixOverlapJudge judge,
      CommandCap cap) {
    this(commands, clock, lifecycle, judge, cap, Settings.WAKE_PENDING_WINDOW.defaultValue());
  }

  /**
   * As above; {@code pendingWindow}: how long a sent overlap wake not yet handled holds back the
   * next overlap wake of its Task attempt (zero: never).
   */
  public CausalRules(
      Function<Command, CompletableFuture<?>> commands,
      Clock clock,
      Lifecycle lifecycle,
      PrefixOverlapJudge judge,
      CommandCap cap,
      Duration pendingWindow) {
    this.commands = commands;
    this.lifecycle = lifecycle;
    this.judge = judge;
    this.cap = cap;
    this.pending = new PendingWakes(clock, pendingWindow);
    this.causal = new CausalCommands(clock);
  }

  /**
   * The rules as a core runs them: at most {@code causal.commands-per-change-per-day} Commands per
   * Change, counted in {@code database}'s metrics, and the settings' wake-pending window.
   */
  public static CausalRules of(
      Function<Command, CompletableFuture<?>> commands,
      Clock clock,
      Lifecycle lifecycle,
      PrefixOverlapJudge judge,
      Database database,
      Settings settings) {
    return new CausalRules(
        commands,
        clock,
        lifecycle,
        judge,
        new CommandCap(
            settings.get(Settings.COMMANDS_PER_CHANGE_PER_DAY),
            clock,
            new PlatformMetrics(database, clock, MetricsBinding.METRICS)),
        settings.get(Settings.WAKE_PENDING_WINDOW));
  }

  /**
   * Finds the overlaps of the batch's resource Events and asks Clef-flash about the prefix-only
   * ones, each decision recorded with its {@code model.routed} Event (a decision recorded before,
   * by a delivery that did not commit, is reused, not asked again). The route waits for the record
   * of a decision the model made; one made without a call is recorded beside the route. A Task that
   * an exact overlap of the batch wakes is not asked about.
   */
  @Override
  public CausalBatchRouter prepare(List<Event> unclaimed) {
    Map<String, List<Wakeable>> overlaps = new HashMap<>();
    Map<String, List<CompletableFuture<Optional<Wakeable>>>> asked = new HashMap<>();
    List<Map.Entry<Event, List<ActiveScopes.Match>>> matches = new ArrayList<>();
    Set<String> exact = new HashSet<>();
    for (Event e : unclaimed) {
      if (prepares(e)) {
        List<ActiveScopes.Match> of =
            lifecycle.agents().overlapping(e.projectId(), keysOf(e), ownAgent(e));
        matches.add(Map.entry(e, of));
        of.stream()
            .filter(m -> m.overlap() == ActiveScopes.Overlap.EXACT)
            .forEach(m -> exact.add(wokenKey(m.taskId(), m.attempt())));
      }
    }
    for (var entry : matches) {
      Event e = entry.getKey();
      List<Wakeable> wakeable = new ArrayList<>();
      for (ActiveScopes.Match m : entry.getValue()) {
        if (m.overlap() == ActiveScopes.Overlap.EXACT) {
          wakeable.add(new Wakeable(m, "exact"));
        } else if (!exact.contains(wokenKey(m.taskId(), m.attempt()))) {
          // Asked only when no exact overlap of the batch wakes this Agent anyway.
          asked
              .computeIfAbsent(e.eventId(), k -> new ArrayList<>())
              .add(
                  CompletableFuture.supplyAsync(
                      () ->
                          decide(e, m).wakes()
                              ? Optional.of(new Wakeable(m, "prefix"))
                              : Optional.empty(),
                      questions));
        }
      }
      overlaps.put(e.eventId(), wakeable);
    }
    // The questions of the batch go out together: each waits on the model, not on the others.
    asked.forEach(
        (eventId, answers) -> answers.forEach(a -> a.join().ifPresent(overlaps.get(eventId)::add)));
    return new CausalBatchRouter() {
      @Override
      public void routeCausalBatch(Tx tx, List<Event> fresh) throws SQLException {
        route(tx, fresh, overlaps);
      }

      @Override
      public Routing plan(Tx read, List<Event> unclaimed) throws SQLException {
        return CausalRules.this.plan(read, unclaimed, overlaps);
      }
    };
  }

  @Override
  public boolean prepares(Event e) {
    return e.eventType().kind() == EventType.Kind.RESOURCE && e.projectId() != null;
  }

  /** An active Agent the Event wakes, and why (the overlap). */
  private record Wakeable(ActiveScopes.Match match, String overlap) {}

  private ModelRouted decide(Event e, ActiveScopes.Match m) {
    Optional<ModelRouted> known = lifecycle.agents().modelRoute(e.eventId(), m.taskId());
    if (known.isPresent()) {
      return known.get();
    }
    ModelRouted decided = judge.decide(e, m);
    CompletableFuture<ModelRouted> recorded = lifecycle.agents().recordModelRoute(decided);
    if (!ModelRoute.Reason.fromWire(decided.reason()).called()) {
      // No model call (no API key, the day's calls used): asked again, it answers the same for
      // free, so the route need not wait for the record behind the Change's other writes.
      recorded.whenComplete(
          (r, error) -> {
            if (error != null) {
              log.warn(
                  "the Clef-flash decision about {} for {} was not recorded: {}",
                  m.taskId(),
                  e.eventId(),
                  error.toString());
            }
          });
      return decided;
    }
    try {
      return recorded.get(SEND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e2) {
      throw new IllegalStateException(
          "cannot record the Clef-flash decision about " + m.taskId() + " for " + e.eventId(), e2);
    } catch (InterruptedException e2) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while recording a Clef-flash decision", e2);
    }
  }

  /** Without {@link #prepare}: overlaps found in the transaction; a prefix one wakes unasked. */
  @Override
  public void routeCausalBatch(Tx tx, List<Event> fresh) throws SQLException {
    route(tx, fresh, Map.of());
  }

  /** Without {@link #prepare}: overlaps found in the read; a prefix one wakes unasked. */
  @Override
  public Routing plan(Tx read, List<Event> unclaimed) throws SQLException {
    return plan(read, unclaimed, Map.of());
  }

  private void route(Tx tx, List<Event> fresh, Map<String, List<Wakeable>> prepared)
      throws SQLException {
    Routing routing = plan(tx, fresh, prepared);
    routing.send();
    routing.record(tx, fresh);
  }

  /**
   * The commands of {@code events} that pass the stale-wake checks and the cap, read in {@code tx};
   * sent by {@link Routing#send}, counted by {@link Routing#record}.
   */
  private Routing plan(Tx tx, List<Event> events, Map<String, List<Wakeable>> prepared)
      throws SQLException {
    List<Command> out = new ArrayList<>();
    List<Command> overlapWakes = new ArrayList<>();
    collect(tx, events, prepared, out, overlapWakes);
    if (out.isEmpty()) {
      return NOTHING;
    }
    StaleWakes.Held held = StaleWakes.held(tx, out);
    Set<String> dropped = new HashSet<>(held.stale());
    dropped.addAll(StaleWakes.proposed(tx, overlapWakes));
    dropped.addAll(
        pending.heldBack(
            tx,
            overlapWakes.stream().filter(w -> !dropped.contains(w.commandId())).toList(),
            held.assignedAt()));
    if (!dropped.isEmpty()) {
      out.removeIf(c -> dropped.contains(c.commandId()));
    }
    CommandCap.Admission admission = cap.plan(tx, out);
    Set<String> overlapIds = new HashSet<>();
    overlapWakes.forEach(w -> overlapIds.add(w.commandId()));
    return new Routing() {
      @Override
      public void send() {
        List<CompletableFuture<?>> sends = new ArrayList<>();
        for (Command c : admission.admitted()) {
          sends.add(commands.apply(c));
        }
        pending.sent(
            admission.admitted().stream().filter(c -> overlapIds.contains(c.commandId())).toList());
        await(sends);
      }

      @Override
      public void record(Tx tx, List<Event> fresh) throws SQLException {
        admission.record(tx);
      }
    };
  }

  private static final Routing NOTHING =
      new Routing() {
        @Override
        public void send() {}

        @Override
        public void record(Tx tx, List<Event> fresh) {}
      };

  /**
   * Adds to {@code out} the commands of {@code fresh} and one wake per Task attempt; the overlap
   * wakes among them also to {@code overlapWakes}.
   */
  private void collect(
      Tx tx,
      List<Event> fresh,
      Map<String, List<Wakeable>> prepared,
      List<Command> out,
      List<Command> overlapWakes)
      throws SQLException {
    Set<String> woken = new HashSet<>();
    for (Event e : fresh) {
      out.addAll(causal.of(e));
      if (e.eventType() == EventType.CANONICAL_ADVANCED) {
        for (TaskRef t : HeldWork.inProject(tx, e.projectId())) {
          Command wake = causal.advancedWake(e, t);
          if (woken.add(wokenKey(wake))) {
            out.add(wake);
          }
        }
      }
      if (e.eventType().kind() == EventType.Kind.RESOURCE && e.projectId() != null) {
        List<Wakeable> wakeable = prepared.get(e.eventId());
        if (wakeable == null) {
          wakeable =
              ActiveScopes.overlapping(tx, e.projectId(), keysOf(e), ownAgent(e)).stream()
                  .map(m -> new Wakeable(m, m.overlap().name().toLowerCase(Locale.ROOT)))
                  .toList();
        }
        for (Wakeable w : wakeable) {
          Command wake = causal.overlapWake(e, w.match(), w.overlap());
          if (woken.add(wokenKey(wake))) {
            out.add(wake);
            overlapWakes.add(wake);
          }
        }
      }
    }
  }

  /** Waits for the queue to store each send: a failure rolls the claims back. */
  private static void await(List<CompletableFuture<?>> sends) {
    if (sends.isEmpty()) {
      return;
    }
    try {
      CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new))
          .get(SEND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new IllegalStateException("a causal command was not sent: " + e.getCause(), e);
    } catch (TimeoutException e) {
      throw new IllegalStateException("causal commands not acknowledged in " + SEND_TIMEOUT, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while sending causal commands", e);
    }
  }

  /** One wake per Task attempt and batch: a second would only wake the same Agent again. */
  private static String wokenKey(Command wake) {
    return wokenKey(wake.taskId(), wake.payload().path("attempt").asInt());
  }

  private static String wokenKey(String taskId, int attempt) {
    return taskId + "#" + attempt;
  }

  /** The keys a resource Event is about: its resource, and a changeset's resource keys. */
  static Set<String> keysOf(Event e) {
    Set<String> keys = new LinkedHashSet<>();
    if (e.resource() != null) {
      keys.add(e.resource());
    }
    e.payload().path("resourceKeys").forEach(k -> keys.add(k.asText()));
    keys.removeIf(k -> k.isBlank() || k.startsWith("change:"));
    return keys;
  }

  /** The Agent that wrote the Event (a resource Event names it in its payload). */
  private static String ownAgent(Event e) {
    String agent = e.payload().path("agentId").asText("");
    return agent.isBlank() ? null : agent;
  }
}
