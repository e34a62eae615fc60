package org.rhumbatron.workload;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.rhumbatron.platform.cluster.ClusterView;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.server.CoreChild;

/**
 * The demo's other cores for {@code --cores N}: N-1 child processes of this same jar on the demo's
 * database and NATS, each with a data directory and a log of its own ({@code core-K/}, {@code
 * core-K.log}), and the one SIGKILL half way through, of the core that holds the most duties.
 */
final class DemoCores implements AutoCloseable {
  /** The core killed and how many duties it held. */
  record Killed(String node, int dutiesHeld) {}

  private final Path dir;
  private final Clock clock;
  private final List<Process> children = new ArrayList<>();
  private final List<String> nodeIds = new ArrayList<>();

  private DemoCores(Path dir, Clock clock) {
    this.dir = dir;
    this.clock = clock;
  }

  /**
   * Starts {@code count} child cores. {@code overrides} are settings the demo's core runs with that
   * the children must share (as {@code RHUMBATRON_<KEY>} variables); {@code config} is the user's
   * settings file, or null.
   */
  static DemoCores start(
      int count,
      Path dir,
      String natsUrl,
      String databaseUrl,
      Path config,
      Map<String, String> overrides,
      Clock clock)
      throws IOException {
    DemoCores cores = new DemoCores(dir, clock);
    try {
      for (int k = 2; k <= count + 1; k++) {
        cores.startOne(k, natsUrl, databaseUrl, config, overrides);
      }
    } catch (IOException | RuntimeException e) {
      cores.close();
      throw e;
    }
    return cores;
  }

  private void startOne(
      int k, String natsUrl, String databaseUrl, Path config, Map<String, String> overrides)
      throws IOException {
    String nodeId = "demo-core-" + k + "-" + Long.toString(clock.millis(), 36);
    List<String> command =
        CoreChild.command(natsUrl, dir.resolve("core-" + k), databaseUrl, 0, config);
    Files.createDirectories(dir.resolve("core-" + k));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("core-" + k + ".log").toFile());
    Map<String, String> env = new HashMap<>(overrides);
    env.put(Settings.CLUSTER_NODE_ID.envName(), nodeId);
    builder.environment().putAll(env);
    children.add(builder.start());
    nodeIds.add(nodeId);
  }

  int count() {
    return children.size();
  }

  /** Whether each child still runs (one a kill ended does not). */
  List<Boolean> running() {
    return children.stream().map(Process::isAlive).toList();
  }

  /**
   * SIGKILLs the child that holds the most duties in {@code view} (the first when none holds any)
   * and waits until it is gone.
   */
  Killed killBusiest(ClusterView view) throws InterruptedException {
    int victim = 0;
    int most = -1;
    for (int i = 0; i < nodeIds.size(); i++) {
      int held = held(view, nodeIds.get(i));
      if (held > most && children.get(i).isAlive()) {
        most = held;
        victim = i;
      }
    }
    children.get(victim).destroyForcibly();
    children.get(victim).waitFor(30, TimeUnit.SECONDS);
    return new Killed(nodeIds.get(victim), most);
  }

  private static int held(ClusterView view, String node) {
    return (int) view.duties().stream().filter(d -> node.equals(d.owner())).count();
  }

  /** SIGTERM to each child that runs, and waits: core's orderly stop hands its duties over. */
  @Override
  public void close() {
    children.forEach(Process::destroy);
    for (Process p : children) {
      try {
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
          p.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        p.destroyForcibly();
      }
    }
  }
}
