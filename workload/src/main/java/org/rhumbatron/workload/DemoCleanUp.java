package org.rhumbatron.workload;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/** What a demo leaves behind at its end: its local database dropped, its temporary data deleted. */
final class DemoCleanUp {
  private DemoCleanUp() {}

  /**
   * Drops {@code database} (null: none) and, when {@code deleteData} and the demo {@code
   * succeeded}, deletes {@code dir}; once, whoever calls first.
   */
  static Runnable of(
      String database, boolean deleteData, AtomicBoolean succeeded, Path dir, PrintStream out) {
    return once(
        () -> {
          if (database != null) {
            DemoDatabase.drop(database, out);
          }
          if (deleteData && succeeded.get()) {
            deleteTree(dir, out);
          }
        });
  }

  /** Ctrl-C of a demo that keeps running: after core stopped, as at a normal end. */
  static void afterCoreStops(CountDownLatch stopped, Duration wait, Runnable cleanUp) {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    if (stopped.await(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                      cleanUp.run();
                    }
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                },
                "rhumbatron-demo-cleanup"));
  }

  private static void deleteTree(Path dir, PrintStream out) {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    } catch (IOException e) {
      out.println("rhumbatron demo: could not delete " + dir + ": " + e);
    }
  }

  /** Runs {@code action} on the first call; a concurrent call waits until it is done. */
  private static Runnable once(Runnable action) {
    AtomicBoolean done = new AtomicBoolean();
    return () -> {
      synchronized (done) {
        if (!done.getAndSet(true)) {
          action.run();
        }
      }
    };
  }
}
