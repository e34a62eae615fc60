package org.rhumbatron.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.server.CoreConfig;
import org.rhumbatron.server.CoreService;

/**
 * The core nodes of a benchmark, in this process: one on a data directory, or several on one
 * PostgreSQL database and one NATS server, each with a data directory {@code node-<i>} of its own
 * and node id {@code bench-<i>}, sharing the duties and the queues.
 */
final class BenchNodes implements AutoCloseable {
  private final List<CoreService> cores;

  private BenchNodes(List<CoreService> cores) {
    this.cores = cores;
  }

  /**
   * Starts {@code count} nodes, one after the other (each takes its share of the duties from those
   * before it); several need a PostgreSQL {@code dbUrl}, as core refuses a second node on SQLite.
   */
  static BenchNodes start(int count, String natsUrl, Path dataDir, String dbUrl, Settings settings)
      throws IOException, InterruptedException {
    if (count < 1) {
      throw new IllegalArgumentException("nodes must be at least 1, was " + count);
    }
    if (count > 1 && Database.sqliteFile(dbUrl).isPresent()) {
      throw new IllegalArgumentException(sqliteRefusal(count, dbUrl));
    }
    List<CoreService> cores = new ArrayList<>();
    try {
      for (int i = 1; i <= count; i++) {
        Path dir = count == 1 ? dataDir : dataDir.resolve("node-" + i);
        Settings own =
            count == 1
                ? settings
                : settings.with(Map.of(Settings.CLUSTER_NODE_ID.key(), "bench-" + i));
        cores.add(CoreService.start(new CoreConfig(natsUrl, dir, dbUrl, 0, own)));
      }
    } catch (IOException | InterruptedException | RuntimeException e) {
      new BenchNodes(cores).close();
      throw e;
    }
    return new BenchNodes(cores);
  }

  /** Why {@code count} nodes cannot run on the SQLite database {@code dbUrl}. */
  static String sqliteRefusal(int count, String dbUrl) {
    return "--nodes "
        + count
        + " needs a PostgreSQL --db (several nodes share one database); "
        + dbUrl
        + " is SQLite, which is one node";
  }

  int count() {
    return cores.size();
  }

  /** Node {@code i}'s lifecycle, {@code i} taken round-robin over the nodes. */
  Lifecycle lifecycle(int i) {
    return cores.get(Math.floorMod(i, cores.size())).lifecycle();
  }

  /** The database, as the first node opened it (all nodes share it). */
  Database database() {
    return cores.get(0).coordinator().database();
  }

  /** Stops the nodes, the last started first; each hands its duties to those still running. */
  @Override
  public void close() {
    for (int i = cores.size() - 1; i >= 0; i--) {
      cores.get(i).close();
    }
  }
}
