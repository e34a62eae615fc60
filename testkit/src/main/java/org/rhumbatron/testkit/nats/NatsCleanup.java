package org.rhumbatron.testkit.nats;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Last resort: kills and deletes what tests left behind when the JVM exits; and the deletion of a
 * server's temporary directory.
 */
final class NatsCleanup {
  private static final Logger log = LoggerFactory.getLogger(NatsCleanup.class);
  private static final Set<Runnable> live = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(() -> List.copyOf(live).forEach(Runnable::run), "nats-server-cleanup"));
  }

  private NatsCleanup() {}

  /** Runs {@code emergency} at JVM exit unless {@link #unregister}ed first. */
  static void register(Runnable emergency) {
    live.add(emergency);
  }

  static void unregister(Runnable emergency) {
    live.remove(emergency);
  }

  static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (var paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(NatsCleanup::deleteQuietly);
    } catch (IOException e) {
      log.warn("cannot delete {}: {}", dir, e.toString());
    }
  }

  private static void deleteQuietly(Path path) {
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      log.warn("cannot delete {}: {}", path, e.toString());
    }
  }
}
