package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Core's indexer on the real indexing queue: an index.build ends as a ready row, or, when every
 * build fails, as a failed row after the queue's 3 retries (4 builds), recorded by the failure hook
 * because the queue has no dead-letter queue.
 */
class IndexingQueueTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  @TempDir Path data;

  private CoreService start(String failureRate) throws Exception {
    CoreService core =
        CoreService.start(
            CoreOptions.config(
                nats.url(),
                data,
                0,
                Map.of(
                    "indexer.simulated.failure-rate", failureRate,
                    "indexer.simulated.duration", "0ms",
                    "queues.indexing.retry-delay", "200ms")));
    core.lifecycle().commands().provisionProject("p-idx", "tenant-1", "Indexed").get();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> core.lifecycle().projects().project("p-idx").isPresent());
    return core;
  }

  private static void sendBuild(CoreService core) throws Exception {
    core.queues()
        .commands()
        .send(
            Command.builder()
                .commandId("cmd_test_index_p-idx")
                .commandType(CommandType.INDEX_BUILD)
                .projectId("p-idx")
                .createdAt(Instant.parse("2026-12-04T10:00:00Z"))
                .payload(JsonNodeFactory.instance.objectNode().put("generation", 0))
                .build())
        .get();
  }

  /** The row as {@code generation state attempts last_error}, or null. */
  private static String row(CoreService core) {
    List<String> rows =
        core.coordinator()
            .database()
            .read(
                tx ->
                    tx.query(
                        "SELECT generation, state, attempts, last_error FROM project_indexes"
                            + " WHERE project_id = 'p-idx'",
                        rs ->
                            rs.getLong(1)
                                + " "
                                + rs.getString(2)
                                + " "
                                + rs.getInt(3)
                                + " "
                                + rs.getString(4)));
    return rows.isEmpty() ? null : String.join(" | ", rows);
  }

  @Test
  void anIndexBuildOnTheQueueEndsAsAReadyRow() throws Exception {
    try (CoreService core = start("0.0")) {
      sendBuild(core);
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> row(core) != null && row(core).startsWith("0 ready"));
      assertThat(row(core)).isEqualTo("0 ready 1 null");
    }
  }

  @Test
  void whenEveryBuildFailsTheIndexBuildEndsAsAFailedRowAfterItsRetries() throws Exception {
    try (CoreService core = start("1.0")) {
      sendBuild(core);
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> row(core) != null && row(core).startsWith("0 failed"));
      assertThat(row(core))
          .startsWith("0 failed 4 index.build cmd_test_index_p-idx: ")
          .endsWith(
              "IndexBuildException: index of project p-idx generation 0, attempt 4:"
                  + " simulated build failure");
    }
  }
}
