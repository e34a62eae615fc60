package org.rhumbatron.workload;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;

/**
 * The demo's progress on stderr: on a terminal a bar redrawn in place, otherwise (a log, a pipe) a
 * plain line every few seconds.
 */
final class DemoProgress {
  static final Duration BAR_EVERY = Duration.ofMillis(250);
  static final Duration LINE_EVERY = Duration.ofSeconds(5);
  private static final int BAR_WIDTH = 30;

  /**
   * What the progress shows; {@code total} is the Changes to run (created, once creation ended).
   */
  record Counts(long completed, long ended, long total, long events, long commands) {}

  private final PrintStream err;
  private final Clock clock;
  private final boolean terminal;
  private final long startMs;
  private long shownAtMs = -1; // never

  DemoProgress(PrintStream err, Clock clock, boolean terminal) {
    this.err = err;
    this.clock = clock;
    this.terminal = terminal;
    this.startMs = clock.millis();
  }

  static DemoProgress onStderr(Clock clock) {
    return new DemoProgress(System.err, clock, stderrIsTerminal());
  }

  /** Whether fd 2 is a terminal (Linux: a tty or pts device); without /proc, the console's. */
  static boolean stderrIsTerminal() {
    try {
      String target = Files.readSymbolicLink(Path.of("/proc/self/fd/2")).toString();
      return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
    } catch (Exception noProc) {
      return System.console() != null;
    }
  }

  /** Shows {@code counts} when the last showing is old enough. */
  void update(Counts counts) {
    long now = clock.millis();
    Duration every = terminal ? BAR_EVERY : LINE_EVERY;
    if (shownAtMs >= 0 && now - shownAtMs < every.toMillis()) {
      return;
    }
    shownAtMs = now;
    show(counts, now);
  }

  /** Shows the final counts and ends the bar's line. */
  void finish(Counts counts) {
    show(counts, clock.millis());
    if (terminal) {
      err.println();
    }
  }

  private void show(Counts c, long now) {
    String text =
        String.format(
            "%d/%d Changes completed%s, %d Events, %d Commands, %d s",
            c.completed(),
            c.total(),
            c.ended() > c.completed()
                ? " (" + (c.ended() - c.completed()) + " ended otherwise)"
                : "",
            c.events(),
            c.commands(),
            (now - startMs) / 1000);
    if (terminal) {
      int filled = (int) Math.min(BAR_WIDTH, c.ended() * BAR_WIDTH / Math.max(1, c.total()));
      err.print(
          "\r[" + "#".repeat(filled) + ".".repeat(BAR_WIDTH - filled) + "] " + text + "\033[K");
    } else {
      err.println("rhumbatron demo: " + text);
    }
    err.flush();
  }
}
