package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.DeadLetterMessage;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.router.deadletter.DeadLetter;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/** Core runs the dead-letter consumer from its table row, and its operator service sees rows. */
class CoreQueuesTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  @TempDir Path data;

  @Test
  void coreRecordsDeadLettersAndAModuleConsumerClosesThemOnSuccess() throws Exception {
    try (CoreService core = CoreService.start(CoreOptions.config(nats.url(), data, 0, Map.of()))) {
      assertThat(
              core.nats()
                  .jetStreamManagement()
                  .getConsumerInfo(Queue.STREAM_NAME, "q-dead-letter")
                  .getConsumerConfiguration()
                  .getFilterSubject())
          .isEqualTo("cmd.dead-letter");
      EnvelopeCodec codec = new EnvelopeCodec();
      Command provision =
          Command.builder()
              .commandId("cmd_provision_p9")
              .commandType(CommandType.PROJECT_PROVISION)
              .projectId("p9")
              .createdAt(Instant.parse("2026-07-01T00:00:00Z"))
              .payload(
                  com.fasterxml.jackson.databind.node.JsonNodeFactory.instance
                      .objectNode()
                      .put("tenantId", "t9")
                      .put("name", "Nine"))
              .build();
      DeadLetterMessage dl =
          new DeadLetterMessage(
              Queue.INTEGRATION,
              4,
              "provisioner unreachable",
              new String(codec.encodeCommand(provision), java.nio.charset.StandardCharsets.UTF_8),
              Instant.parse("2026-07-01T00:01:00Z"));
      core.queues().commands().sendDeadLetter(dl, 1).get();
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> core.queues().deadLetters().listOpen(10).size() == 1);
      DeadLetter row = core.queues().deadLetters().listOpen(10).get(0);
      assertThat(row.commandId()).isEqualTo("cmd_provision_p9");
      assertThat(row.reason()).isEqualTo("provisioner unreachable");

      // Core's own integration consumer handles the re-sent attempt 2 and closes the row.
      core.queues().deadLetters().retry(row.id(), "ops");
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> core.queues().deadLetters().listOpen(10).isEmpty());
      assertThat(core.queues().deadLetters().find(row.id()).orElseThrow().resolution())
          .isEqualTo("succeeded");
      assertThat(core.lifecycle().projects().project("p9").orElseThrow().tenantId())
          .isEqualTo("t9");
    }
  }
}
