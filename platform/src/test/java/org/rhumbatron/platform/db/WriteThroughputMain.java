package org.rhumbatron.platform.db;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Not a test: commits per second of the actor commit shape (one upsert plus one outbox insert per
 * transaction). Run: {@code java -cp <test classpath>
 * org.rhumbatron.platform.db.WriteThroughputMain [url-or-path or ""] [threads]
 * [transactions-per-thread]}; without a URL it uses a fresh SQLite file.
 */
public final class WriteThroughputMain {

  private WriteThroughputMain() {}

  public static void main(String[] args) throws Exception {
    boolean tempFile = args.length == 0 || args[0].isBlank();
    String url =
        tempFile ? Files.createTempDirectory("rt-bench-").resolve("bench.db").toString() : args[0];
    int threads = args.length > 1 ? Integer.parseInt(args[1]) : 1;
    int perThread = args.length > 2 ? Integer.parseInt(args[2]) : 20_000;
    try (Database db = Database.open(url)) {
      run(db, threads, Math.min(perThread, 2_000), "warmup");
      run(db, threads, perThread, "run");
    }
    if (tempFile) {
      Path dir = Path.of(url).getParent();
      try (var files = Files.list(dir)) {
        for (Path f : files.toList()) {
          Files.delete(f);
        }
      }
      Files.delete(dir);
    }
  }

  private static void run(Database db, int threads, int perThread, String label) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    long start = System.nanoTime();
    List<Future<?>> futures = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      String writer = label + "_" + t + "_";
      futures.add(
          pool.submit(
              () -> {
                for (int i = 0; i < perThread; i++) {
                  String eventId = writer + i;
                  String actor = "shard-" + (i % 16);
                  db.inTransaction(tx -> DatabaseContract.upsertAndAppend(tx, actor, eventId));
                }
                return null;
              }));
    }
    for (Future<?> f : futures) {
      f.get();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    pool.shutdown();
    System.out.printf(
        "%s %s: %d threads x %d tx in %.2f s = %.0f commits/s (transient retries %d)%n",
        db.url(),
        label,
        threads,
        perThread,
        seconds,
        threads * perThread / seconds,
        db.transientRetries());
  }
}
