package org.rhumbatron.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;
import org.rhumbatron.workload.LifecycleWorkload;

/**
 * bench lifecycle on two nodes of one PostgreSQL database and one nats-server, run small: every
 * Change completes, the figures are there, and each node had a data directory of its own.
 */
class PostgresLifecycleBenchNodesTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension db = DatabaseExtension.postgres();
  @TempDir Path data;

  @Test
  void twoNodesRunTheChangesToCompletedAndSayHowManyNodesRan() throws Exception {
    String json =
        new LifecycleBench(
                nats.url(),
                data,
                db.database().url(),
                4,
                2,
                1,
                Duration.ZERO,
                false,
                LifecycleWorkload.Scopes.DISJOINT,
                2)
            .run();

    JsonNode out = new ObjectMapper().readTree(json);
    assertThat(out.path("nodes").asInt()).isEqualTo(2);
    assertThat(out.path("database").asText()).isEqualTo("postgres");
    assertThat(out.path("changes_per_s").asDouble()).isPositive();
    assertThat(out.path("completed_changes_per_s").asDouble()).isPositive();
    assertThat(out.path("created_to_completed_ms").path("samples").asInt()).isEqualTo(4);
    assertThat(out.path("completed_to_next_wake_ms").path("samples").asInt()).isEqualTo(4 * 8);
    assertThat(Files.isDirectory(data.resolve("node-1"))).isTrue();
    assertThat(Files.isDirectory(data.resolve("node-2"))).isTrue();
  }
}
