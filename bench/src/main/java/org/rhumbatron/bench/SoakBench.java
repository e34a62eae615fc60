package org.rhumbatron.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.rhumbatron.coordinator.shard.ResourceShardActor;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;
import org.rhumbatron.server.CoreConfig;
import org.rhumbatron.server.CoreService;

/**
 * The retention soak: a core of its own with every retention shortened to {@code keep} and the
 * purges run every minute, fed Events at a constant rate, its database size sampled throughout.
 * Before the horizon the size grows by the bytes each Event leaves; once the first rows pass it,
 * each purge deletes what the last minute added and the size stays flat.
 */
final class SoakBench {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long TICK_MILLIS = 100;
  private static final int TASKS_PER_PROJECT = 20;
  private static final long VACUUM_AFTER_MILLIS = 10_000;
  // The purges run on the release sweep, every minute here (maintenance.every-minutes).
  private static final Duration PURGE_EVERY = Duration.ofMinutes(1);

  /** The tables with a horizon, each with its time column, as the purges read them. */
  private static final Map<String, String> PURGED =
      Map.of(
          "processed_events", "processed_at_ms",
          "project_events", "recorded_at_ms",
          "platform_metrics", "recorded_at_ms",
          "outbox", "published_at_ms");

  private final String natsUrl;
  private final Path dataDir;
  private final String dbUrl;
  private final int eventsPerSecond;
  private final int projects;
  private final Duration keep;
  private final Duration length;
  private final Duration sampleEvery;
  private final Clock clock = Clock.systemUTC();
  private final String runId = Long.toString(Clock.systemUTC().millis(), 36);
  private final ObjectNode out = JSON.createObjectNode();
  private volatile int vacuumRuns;

  SoakBench(
      String natsUrl,
      Path dataDir,
      String dbUrl,
      int eventsPerSecond,
      int projects,
      Duration keep,
      Duration length,
      Duration sampleEvery) {
    this.natsUrl = natsUrl;
    this.dataDir = dataDir;
    this.dbUrl = dbUrl;
    this.eventsPerSecond = eventsPerSecond;
    this.projects = projects;
    this.keep = keep;
    this.length = length;
    this.sampleEvery = sampleEvery;
  }

  /**
   * Every horizon at {@code keep} (the outbox's a second shorter: it must stay below the streams'
   * max age, which is {@code keep} too, as is their duplicate window, and processed-events.keep
   * must not be below it), and the release sweep, which purges, every minute.
   */
  static Settings settings(Duration keep) {
    String k = keep.toMillis() + "ms";
    Map<String, String> s = new LinkedHashMap<>();
    s.put(Settings.EVENT_STREAM_MAX_AGE.key(), k);
    s.put(Settings.DUPLICATE_WINDOW.key(), k); // JetStream: never above the max age
    s.put(Settings.PROCESSED_EVENTS_KEEP.key(), k);
    s.put(Settings.PROJECT_EVENTS_KEEP.key(), k);
    s.put(Settings.PLATFORM_METRICS_KEEP.key(), k);
    s.put(Settings.OUTBOX_KEEP_PUBLISHED.key(), keep.minusSeconds(1).toMillis() + "ms");
    s.put(Settings.OUTBOX_PURGE_EVERY.key(), PURGE_EVERY.toMillis() + "ms");
    s.put(Settings.MAINTENANCE_EVERY_MINUTES.key(), Long.toString(PURGE_EVERY.toMinutes()));
    s.put(Settings.MAINTENANCE_MINUTE_OFFSET.key(), "0");
    return Settings.defaults().with(s);
  }

  /** One sample: time since start, Events committed, sizes, and rows and oldest age per table. */
  private record Sample(
      long atMillis,
      long events,
      long usedBytes,
      long fileBytes,
      Map<String, Long> rows,
      Map<String, Long> oldestAgeMillis) {}

  String run() throws Exception {
    Settings settings = settings(keep);
    List<Sample> samples = new ArrayList<>();
    String dialect;
    long start;
    long committed;
    try (CoreService core =
        CoreService.start(new CoreConfig(natsUrl, dataDir, dbUrl, 0, settings))) {
      Database db = core.coordinator().database();
      dialect = db.dialect().name();
      List<ResourceShardActor> writers = new ArrayList<>();
      for (int p = 0; p < projects; p++) {
        writers.add(core.coordinator().shard("p-soak-" + runId + "-" + p, 0));
      }
      out.put("bench", "soak");
      String autovacuum = autovacuum(db);
      out.put("autovacuum", autovacuum);
      ScheduledExecutorService vacuums =
          Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("soak-vacuum"));
      if (autovacuum.equals("off")) {
        // A server without autovacuum never makes the purged rows' space reusable: the bench
        // does what autovacuum would, after each purge (the sweep's minute), so that it measures
        // the purges and not that server's configuration.
        long toNextMinute = 60_000 - Math.floorMod(clock.millis(), 60_000L) + VACUUM_AFTER_MILLIS;
        vacuums.scheduleAtFixedRate(this::vacuum, toNextMinute, 60_000, TimeUnit.MILLISECONDS);
      }
      start = clock.millis();
      long end = start + length.toMillis();
      long nextSample = start;
      committed = 0;
      List<CompletableFuture<Integer>> window = new ArrayList<>();
      while (clock.millis() < end) {
        long now = clock.millis();
        if (now >= nextSample) {
          samples.add(sample(db, now - start, committed));
          nextSample += sampleEvery.toMillis();
        }
        // A constant rate: the Events due by now, spread over the Projects (so over the streams).
        long due = (now - start) * eventsPerSecond / 1_000;
        while (committed < due) {
          ResourceShardActor w = writers.get((int) (committed % writers.size()));
          window.add(w.appendEvents(List.of(event(w.projectId(), committed))));
          committed++;
        }
        CompletableFuture.allOf(window.toArray(CompletableFuture[]::new)).join();
        window.clear();
        Thread.sleep(TICK_MILLIS);
      }
      samples.add(sample(db, clock.millis() - start, committed));
      vacuums.shutdownNow();
    }
    return report(dialect, samples, committed);
  }

  /**
   * An informational Event (task.running): the router routes nothing on it, so the run measures
   * what every Event leaves, not Commands for Changes that do not exist. Twenty Tasks per Project,
   * so the project view holds a bounded set of items.
   */
  /** PostgreSQL's {@code autovacuum} setting; SQLite reuses freed pages itself. */
  private static String autovacuum(Database db) {
    if (!db.dialect().name().equals("postgres")) {
      return "not_applicable";
    }
    return db.read(tx -> tx.queryFirst("SHOW autovacuum", rs -> rs.getString(1)).orElse("on"));
  }

  /** A plain VACUUM of the database: it marks dead rows' space free, never shrinks a file. */
  private void vacuum() {
    try (java.sql.Connection c = DriverManager.getConnection(dbUrl);
        Statement st = c.createStatement()) {
      st.execute("VACUUM");
      vacuumRuns++;
    } catch (SQLException e) {
      System.err.println("soak: VACUUM failed: " + e.getMessage());
    }
  }

  private Event event(String projectId, long k) {
    return Event.builder()
        .eventId(StableIds.randomEventId(clock.instant()))
        .eventType(EventType.TASK_RUNNING)
        .tenantId("tenant-soak")
        .projectId(projectId)
        .changeId("c-" + projectId)
        .taskId("t-" + (k % TASKS_PER_PROJECT))
        .actor("soak")
        .correlationId("c-" + projectId)
        .timestamp(clock.instant())
        .build();
  }

  private Sample sample(Database db, long atMillis, long events) throws Exception {
    long now = clock.millis();
    Map<String, Long> rows = new LinkedHashMap<>();
    Map<String, Long> oldest = new LinkedHashMap<>();
    long[] used = {0};
    db.read(
        tx -> {
          for (Map.Entry<String, String> t : PURGED.entrySet()) {
            rows.put(t.getKey(), tx.queryLong("SELECT COUNT(*) FROM " + t.getKey()));
            long min =
                tx.queryLong("SELECT COALESCE(MIN(" + t.getValue() + "), 0) FROM " + t.getKey());
            oldest.put(t.getKey(), min == 0 ? 0 : now - min);
          }
          if (db.dialect().name().equals("sqlite")) {
            // Pages in use: the file keeps the pages a purge freed and reuses them.
            used[0] =
                (tx.queryLong("PRAGMA page_count") - tx.queryLong("PRAGMA freelist_count"))
                    * tx.queryLong("PRAGMA page_size");
          } else {
            used[0] = tx.queryLong("SELECT pg_database_size(current_database())");
          }
          return null;
        });
    return new Sample(atMillis, events, used[0], fileBytes(), rows, oldest);
  }

  /** SQLite: the database file and its WAL; PostgreSQL: the tables with their indexes. */
  private long fileBytes() throws Exception {
    if (dbUrl.startsWith("jdbc:postgresql:")) {
      return -1;
    }
    Path file = Path.of(dbUrl.startsWith("jdbc:sqlite:") ? dbUrl.substring(12) : dbUrl);
    Path wal = Path.of(file + "-wal");
    return Files.size(file) + (Files.exists(wal) ? Files.size(wal) : 0);
  }

  private static long maxUsed(List<Sample> samples) {
    return samples.stream().mapToLong(Sample::usedBytes).max().orElse(0);
  }

  private static long maxFile(List<Sample> samples) {
    return samples.stream().mapToLong(Sample::fileBytes).max().orElse(0);
  }

  private String report(String dialect, List<Sample> samples, long committed) throws Exception {
    out.put("database", dialect);
    out.put("vacuum_runs", vacuumRuns);
    out.put("events_per_s", eventsPerSecond);
    out.put("events", committed);
    out.put("projects", projects);
    out.put("keep_s", keep.toSeconds());
    out.put("purge_every_s", PURGE_EVERY.toSeconds());
    out.put("length_s", length.toSeconds());
    Sample first = samples.get(0);
    // Growth until the first rows pass the horizon: what each Event leaves in the database.
    Sample beforeHorizon = first;
    for (Sample s : samples) {
      if (s.atMillis() <= keep.toMillis()) {
        beforeHorizon = s;
      }
    }
    long grown = beforeHorizon.usedBytes() - first.usedBytes();
    long eventsThen = beforeHorizon.events() - first.events();
    out.put("bytes_per_event", eventsThen == 0 ? 0 : grown / eventsThen);
    // Flat once every table has been purged at least once past its horizon.
    long steadyFrom = keep.plus(PURGE_EVERY).plusSeconds(30).toMillis();
    List<Sample> steady = samples.stream().filter(s -> s.atMillis() >= steadyFrom).toList();
    if (!steady.isEmpty()) {
      long min = steady.stream().mapToLong(Sample::usedBytes).min().orElseThrow();
      long max = steady.stream().mapToLong(Sample::usedBytes).max().orElseThrow();
      ObjectNode flat = out.putObject("after_horizon");
      flat.put("from_s", steadyFrom / 1_000);
      flat.put("samples", steady.size());
      flat.put("min_bytes", min);
      flat.put("max_bytes", max);
      flat.put("first_bytes", steady.get(0).usedBytes());
      flat.put("last_bytes", steady.get(steady.size() - 1).usedBytes());
      flat.put("events_meanwhile", steady.get(steady.size() - 1).events() - steady.get(0).events());
      // Flat: the second half of the window peaks no higher than the first (purges keep up).
      List<Sample> firstHalf = steady.subList(0, (steady.size() + 1) / 2);
      List<Sample> secondHalf = steady.subList(steady.size() / 2, steady.size());
      flat.put("max_first_half_bytes", maxUsed(firstHalf));
      flat.put("max_second_half_bytes", maxUsed(secondHalf));
      // What the retained window holds at most: keep plus one purge interval of Events.
      flat.put(
          "expected_max_bytes",
          eventsThen == 0
              ? 0
              : first.usedBytes()
                  + grown / eventsThen * eventsPerSecond * keep.plus(PURGE_EVERY).toSeconds());
      if (steady.get(0).fileBytes() >= 0) {
        flat.put("file_max_first_half_bytes", maxFile(firstHalf));
        flat.put("file_max_second_half_bytes", maxFile(secondHalf));
      }
      ObjectNode oldest = flat.putObject("max_oldest_row_age_s");
      for (String t : PURGED.keySet()) {
        oldest.put(
            t, steady.stream().mapToLong(s -> s.oldestAgeMillis().get(t)).max().orElse(0) / 1_000);
      }
    }
    ArrayNode rows = out.putArray("samples");
    for (Sample s : samples) {
      ObjectNode n = rows.addObject();
      n.put("t_s", s.atMillis() / 1_000);
      n.put("events", s.events());
      n.put("used_bytes", s.usedBytes());
      if (s.fileBytes() >= 0) {
        n.put("file_bytes", s.fileBytes());
      }
      s.rows().forEach(n::put);
    }
    return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(out);
  }
}
