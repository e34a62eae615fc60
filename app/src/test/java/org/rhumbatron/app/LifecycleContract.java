package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.lifecycle.ChangeCreated;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.WorkGraph;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The first half of the Change lifecycle in core, end to end on a real nats-server and database: a
 * Project through project.provision, a Change of 20 Tasks, simulated Agents, the router's dispatch
 * and settle, until the Change is verifying. Run against SQLite and PostgreSQL.
 */
abstract class LifecycleContract {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @TempDir Path data;

  abstract TestDatabase db();

  CoreService start(Map<String, String> overrides) throws Exception {
    Settings settings =
        Settings.defaults().with(Map.of("agents.simulated.step-delay", "5ms")).with(overrides);
    return CoreService.start(new CoreConfig(nats.url(), data, db().url(), 0, settings));
  }

  static void provision(Lifecycle lifecycle, String projectId) throws Exception {
    lifecycle.provisionProject(projectId, "tenant-1", "Project " + projectId).get();
    await().atMost(Duration.ofSeconds(30)).until(() -> lifecycle.project(projectId).isPresent());
  }

  @Test
  void twentyTasksRunInDependencyOrderWithAtMostEightAgentsUntilVerifying() throws Exception {
    WorkGraph graph = Workloads.twentyTasks();
    try (CoreService core = start(Map.of())) {
      Lifecycle lifecycle = core.lifecycle();
      provision(lifecycle, "p-dag");
      ChangeCreated created = lifecycle.createChange("p-dag", "req-1", graph).get();
      assertThat(created.created()).isTrue();
      String changeId = created.change().changeId();
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> lifecycle.change(changeId).orElseThrow().state().equals("verifying"));
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  StreamReader.events(core.nats(), "p-dag").stream()
                      .anyMatch(e -> e.eventType() == EventType.VERIFICATION_STARTED));
      List<Event> events = StreamReader.events(core.nats(), "p-dag");
      LifecycleChecker check = LifecycleChecker.check(graph, changeId, 8, events);
      assertThat(check.problems).isEmpty();
      assertThat(check.completionOrder).hasSize(20);
      assertThat(check.maxHeld).isEqualTo(8); // 12 roots: the limit was reached, never passed
      assertThat(lifecycle.tasks(changeId)).allMatch(t -> t.state().equals("completed"));
      assertThat(events).filteredOn(e -> e.eventType() == EventType.PROJECT_CREATED).hasSize(1);
    }
  }
}
