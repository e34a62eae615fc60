package org.rhumbatron.platform.tracing;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.Event;

/** The ids core's spans carry, under one set of names. */
public final class TraceAttributes {
  public static final AttributeKey<String> EVENT_ID = AttributeKey.stringKey("rhumbatron.event.id");
  public static final AttributeKey<String> EVENT_TYPE =
      AttributeKey.stringKey("rhumbatron.event.type");
  public static final AttributeKey<java.util.List<String>> EVENT_IDS =
      AttributeKey.stringArrayKey("rhumbatron.event.ids");
  public static final AttributeKey<String> PROJECT_ID =
      AttributeKey.stringKey("rhumbatron.project.id");
  public static final AttributeKey<String> CHANGE_ID =
      AttributeKey.stringKey("rhumbatron.change.id");
  public static final AttributeKey<String> TASK_ID = AttributeKey.stringKey("rhumbatron.task.id");
  public static final AttributeKey<String> COMMAND_ID =
      AttributeKey.stringKey("rhumbatron.command.id");
  public static final AttributeKey<String> COMMAND_TYPE =
      AttributeKey.stringKey("rhumbatron.command.type");
  public static final AttributeKey<String> ACTOR = AttributeKey.stringKey("rhumbatron.actor");
  public static final AttributeKey<String> AGENT_ID = AttributeKey.stringKey("rhumbatron.agent.id");
  public static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("rhumbatron.outcome");

  /** The stream or queue subject (OpenTelemetry's messaging convention). */
  public static final AttributeKey<String> DESTINATION =
      AttributeKey.stringKey("messaging.destination.name");

  /** The durable consumer's name. */
  public static final AttributeKey<String> CONSUMER =
      AttributeKey.stringKey("messaging.consumer.group.name");

  public static final AttributeKey<String> MESSAGE_ID =
      AttributeKey.stringKey("messaging.message.id");

  private TraceAttributes() {}

  /** An Event's ids (those it has). */
  public static AttributesBuilder of(Event e) {
    AttributesBuilder b = Attributes.builder();
    b.put(EVENT_ID, e.eventId());
    b.put(EVENT_TYPE, e.eventType().wireName());
    putIfSet(b, PROJECT_ID, e.projectId());
    putIfSet(b, CHANGE_ID, e.changeId());
    putIfSet(b, TASK_ID, e.taskId());
    return b;
  }

  /** A Command's ids (those it has). */
  public static AttributesBuilder of(Command c) {
    AttributesBuilder b = Attributes.builder();
    b.put(COMMAND_ID, c.commandId());
    b.put(COMMAND_TYPE, c.commandType().wireName());
    putIfSet(b, PROJECT_ID, c.projectId());
    putIfSet(b, CHANGE_ID, c.changeId());
    putIfSet(b, TASK_ID, c.taskId());
    return b;
  }

  public static void putIfSet(AttributesBuilder b, AttributeKey<String> key, String value) {
    if (value != null) {
      b.put(key, value);
    }
  }
}
