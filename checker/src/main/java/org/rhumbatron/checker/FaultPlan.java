package org.rhumbatron.checker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * A seeded schedule of faults over a run: one fault at a time, each healed before the next, every
 * kind asked for at least once (shuffled), then kinds drawn at random until the run's time is used.
 * Lengths: a pause 10 to 60 s, a cut link for minutes; both shrink on short runs. Every fault ends
 * within the duration: a kind that does not fit is dropped and named, so {@code --duration} is the
 * whole fault phase, as its help says; {@link #shortestFitting} tells how long a run must be to
 * hold every kind. A fault that hits one event stream hits one that the workload's Projects use: an
 * unused stream has nothing to lose.
 */
final class FaultPlan {
  enum Kind {
    CORE_KILL("core-kill"),
    CORE_KILL_AFTER_COMMIT("core-kill-after-commit"),
    NATS_KILL("nats-kill"),
    NATS_PAUSE("nats-pause"),
    LOST_TAIL("lost-tail"),
    LINK_CUT("link-cut"),
    LINK_STALL("link-stall"),
    LINK_SLOW("link-slow"),
    NATS_DOWN_AT_START("nats-down-at-start"),
    DB_RESTART("db-restart"),
    DISK_FULL("disk-full"),
    POISON("poison"),
    NODE_KILL("node-kill"),
    NODE_PAUSE("node-pause"),
    NODE_STALL("node-stall"),
    NATS_NODE_KILL("nats-node-kill");

    final String wire;

    Kind(String wire) {
      this.wire = wire;
    }

    static Kind fromWire(String name) {
      return Arrays.stream(values())
          .filter(k -> k.wire.equals(name))
          .findFirst()
          .orElseThrow(
              () ->
                  new IllegalArgumentException(
                      "unknown fault "
                          + name
                          + "; known: "
                          + String.join(", ", Arrays.stream(values()).map(k -> k.wire).toList())));
    }
  }

  /**
   * One fault: when it starts (from the run's start), how long it lasts, which stream it hits (-1
   * for a fault that hits none), which core or nats-server it hits (-1 for one that hits all).
   */
  record Fault(Kind kind, long atMillis, long lastsMillis, int stream, int target) {
    Fault(Kind kind, long atMillis, long lastsMillis, int stream) {
      this(kind, atMillis, lastsMillis, stream, -1);
    }
  }

  /** The faults in order, and the kinds asked for that did not fit in the duration. */
  record Plan(List<Fault> faults, List<Kind> dropped) {}

  static final Duration FIRST_AFTER = Duration.ofSeconds(10);

  /** A node-stall fault: this many SIGSTOPs of one core, each this long, this far apart. */
  static final int STALLS_PER_FAULT = 10;

  static final Duration STALL = Duration.ofSeconds(2);
  static final Duration STALL_GAP = Duration.ofSeconds(3);
  static final Duration GAP_MIN = Duration.ofSeconds(5);
  static final Duration GAP_MAX = Duration.ofSeconds(15);

  /** Where the search for a duration that fits the kinds gives up. */
  static final Duration LONGEST = Duration.ofDays(1);

  private FaultPlan() {}

  /**
   * The schedule for {@code seed}: {@code streams} are the event streams the workload's Projects
   * use (see {@link org.rhumbatron.protocol.EventStreams#streamIndex}), not empty.
   */
  static Plan plan(long seed, Duration duration, List<Kind> kinds, List<Integer> streams) {
    return plan(seed, duration, kinds, streams, CheckShape.SINGLE);
  }

  /** As above, for the cores and servers of {@code shape}: a node fault hits one of them. */
  static Plan plan(
      long seed, Duration duration, List<Kind> kinds, List<Integer> streams, CheckShape shape) {
    if (streams.isEmpty()) {
      throw new IllegalArgumentException("a plan needs the workload's event streams");
    }
    Random random = new Random(seed);
    long total = duration.toMillis();
    List<Kind> first = new ArrayList<>(kinds);
    first.remove(Kind.NATS_DOWN_AT_START);
    Collections.shuffle(first, random);
    List<Fault> out = new ArrayList<>();
    List<Kind> dropped = new ArrayList<>();
    if (kinds.contains(Kind.NATS_DOWN_AT_START)) {
      // Before the workload starts, so not part of the fault phase.
      out.add(new Fault(Kind.NATS_DOWN_AT_START, 0, between(random, 5_000, 15_000), -1));
    }
    long at = FIRST_AFTER.toMillis();
    for (Kind kind : first) {
      Fault f = fault(kind, at, random, total, streams, shape);
      if (f.atMillis() + f.lastsMillis() > total) {
        dropped.add(kind);
        continue;
      }
      out.add(f);
      at += f.lastsMillis() + between(random, GAP_MIN.toMillis(), GAP_MAX.toMillis());
    }
    List<Kind> planned = first.stream().filter(k -> !dropped.contains(k)).toList();
    while (!planned.isEmpty() && at < total) {
      Fault f =
          fault(planned.get(random.nextInt(planned.size())), at, random, total, streams, shape);
      if (f.atMillis() + f.lastsMillis() > total) {
        break;
      }
      out.add(f);
      at += f.lastsMillis() + between(random, GAP_MIN.toMillis(), GAP_MAX.toMillis());
    }
    return new Plan(List.copyOf(out), List.copyOf(dropped));
  }

  private static Fault fault(
      Kind kind, long at, Random random, long total, List<Integer> streams, CheckShape shape) {
    long lasts = length(kind, random, total, shape.lease().toMillis());
    int stream = kind == Kind.LOST_TAIL ? streams.get(random.nextInt(streams.size())) : -1;
    // Drawn only for the node kinds, so the schedules of the other kinds stay as they were.
    int target =
        switch (kind) {
          case NODE_KILL, NODE_PAUSE, NODE_STALL -> random.nextInt(shape.cores());
          case NATS_NODE_KILL -> random.nextInt(shape.natsServers());
          default -> -1;
        };
    return new Fault(kind, at, lasts, stream, target);
  }

  /**
   * How long a fault of {@code kind} lasts: its range, at most a sixth of the run. A core stays
   * down or paused past its lease, so that the others take its duties over.
   */
  private static long length(Kind kind, Random random, long total, long lease) {
    long[] range = range(kind, lease);
    if (range[1] == 0) {
      return 0; // no draw: the schedules stay those of earlier versions
    }
    long lasts = between(random, range[0], range[1]);
    return capped(kind) ? Math.min(lasts, cap(total)) : lasts;
  }

  /** The shortest and (exclusive) longest length of {@code kind} before the cap, in ms. */
  private static long[] range(Kind kind, long lease) {
    return switch (kind) {
      case NODE_KILL, NODE_PAUSE -> new long[] {lease + 5_000, 2 * lease + 15_000};
      case NODE_STALL -> {
        long burst = STALLS_PER_FAULT * (STALL.toMillis() + STALL_GAP.toMillis());
        yield new long[] {burst, burst};
      }
      case NATS_PAUSE, LINK_STALL, LINK_SLOW -> new long[] {10_000, 60_000};
      case LINK_CUT -> new long[] {60_000, 180_000};
      case DB_RESTART, DISK_FULL -> new long[] {5_000, 20_000};
      case CORE_KILL, CORE_KILL_AFTER_COMMIT, NATS_KILL, LOST_TAIL -> new long[] {1_000, 5_000};
      case NATS_NODE_KILL -> new long[] {5_000, 30_000};
      case POISON, NATS_DOWN_AT_START -> new long[] {0, 0};
    };
  }

  /** A node fault must outlast the lease however short the run; the others shrink with it. */
  private static boolean capped(Kind kind) {
    return kind != Kind.NODE_KILL && kind != Kind.NODE_PAUSE && kind != Kind.NODE_STALL;
  }

  private static long cap(long total) {
    return Math.max(10_000, total / 6);
  }

  /**
   * The shortest whole-second duration whose plan for {@code seed} holds every kind of {@code
   * kinds}, up to {@link #LONGEST}.
   */
  static Duration shortestFitting(
      long seed, List<Kind> kinds, List<Integer> streams, CheckShape shape) {
    for (long s = 1; s <= LONGEST.toSeconds(); s++) {
      if (plan(seed, Duration.ofSeconds(s), kinds, streams, shape).dropped().isEmpty()) {
        return Duration.ofSeconds(s);
      }
    }
    throw new IllegalArgumentException("faults " + wires(kinds) + " do not fit in " + LONGEST);
  }

  /**
   * The shortest whole-second duration that holds every kind of {@code kinds} whatever the seed:
   * each fault at its longest, each gap at {@link #GAP_MAX}.
   */
  static Duration shortestFittingAnySeed(List<Kind> kinds, CheckShape shape) {
    long lease = shape.lease().toMillis();
    List<Kind> timed = kinds.stream().filter(k -> k != Kind.NATS_DOWN_AT_START).toList();
    for (long s = 1; s <= LONGEST.toSeconds(); s++) {
      long total = s * 1000;
      long end = FIRST_AFTER.toMillis() + Math.max(0, timed.size() - 1) * GAP_MAX.toMillis();
      for (Kind k : timed) {
        long longest = range(k, lease)[1];
        end += capped(k) ? Math.min(longest, cap(total)) : longest;
      }
      if (end <= total) {
        return Duration.ofSeconds(s);
      }
    }
    throw new IllegalArgumentException("faults " + wires(kinds) + " do not fit in " + LONGEST);
  }

  static String wires(List<Kind> kinds) {
    return String.join(",", kinds.stream().map(k -> k.wire).toList());
  }

  private static long between(Random random, long min, long max) {
    return min + (long) (random.nextDouble() * (max - min));
  }
}
