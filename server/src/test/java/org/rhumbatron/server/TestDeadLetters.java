package org.rhumbatron.server;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.DeadLetterMessage;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Queue;

/** Dead letters as the integration consumer leaves them, for the tests of what operators do. */
public final class TestDeadLetters {
  private TestDeadLetters() {}

  /** The {@code project.provision} of {@code projectId} named {@code name}. */
  public static Command provision(String projectId, String name) {
    return Command.builder()
        .commandId("cmd_provision_" + projectId)
        .commandType(CommandType.PROJECT_PROVISION)
        .projectId(projectId)
        .createdAt(Instant.parse("2026-07-01T00:00:00Z"))
        .payload(JsonNodeFactory.instance.objectNode().put("tenantId", "t1").put("name", name))
        .build();
  }

  /** {@code command}'s dead letter after its last delivery on the integration queue. */
  public static DeadLetterMessage of(Command command, String reason) {
    return new DeadLetterMessage(
        Queue.INTEGRATION,
        4,
        reason,
        new String(new EnvelopeCodec().encodeCommand(command), StandardCharsets.UTF_8),
        Instant.parse("2026-07-01T00:01:00Z"));
  }
}
