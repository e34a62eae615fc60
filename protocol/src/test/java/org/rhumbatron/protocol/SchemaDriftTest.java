package org.rhumbatron.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The JSON Schema files and the Java types say the same thing: field names and order, type enums,
 * the conditional rules, and the id patterns. Edit one without the other and this fails.
 */
class SchemaDriftTest {

  private static final JsonNode EVENT = Schemas.read(Schemas.EVENT_RESOURCE, Samples.MAPPER);
  private static final JsonNode COMMAND = Schemas.read(Schemas.COMMAND_RESOURCE, Samples.MAPPER);
  private static final JsonNode DEAD_LETTER =
      Schemas.read(Schemas.DEAD_LETTER_RESOURCE, Samples.MAPPER);

  @Test
  void schemasAreDraft202012AndClosed() {
    for (JsonNode schema : List.of(EVENT, COMMAND, DEAD_LETTER)) {
      assertThat(schema.get("$schema").textValue())
          .isEqualTo("https://json-schema.org/draft/2020-12/schema");
      assertThat(schema.get("additionalProperties").booleanValue()).isFalse();
    }
  }

  @Test
  void eventTypeEnumEqualsTheJavaEnum() {
    assertThat(texts(EVENT.at("/$defs/eventType/enum")))
        .containsExactlyElementsOf(wireNames(EventType.values(), EventType::wireName));
  }

  @Test
  void commandTypeEnumEqualsTheJavaEnum() {
    assertThat(texts(COMMAND.at("/$defs/commandType/enum")))
        .containsExactlyElementsOf(wireNames(CommandType.values(), CommandType::wireName));
  }

  @Test
  void originQueueEnumEqualsTheQueuesThatHaveADeadLetterQueue() {
    List<String> queues =
        Arrays.stream(Queue.values())
            .filter(Queue::hasDeadLetterQueue)
            .map(Queue::wireName)
            .collect(Collectors.toList());

    assertThat(texts(DEAD_LETTER.at("/properties/originQueue/enum")))
        .containsExactlyElementsOf(queues);
  }

  @Test
  void everyFieldIsRequiredAndInTheRecordsOrder() {
    assertRequiredFields(EVENT, Event.class);
    assertRequiredFields(COMMAND, Command.class);
    assertRequiredFields(DEAD_LETTER, DeadLetterMessage.class);
  }

  @Test
  void resourceEventsMustNameTheirResource() {
    assertThat(texts(EVENT.at("/if/properties/eventType/enum")))
        .containsExactlyInAnyOrderElementsOf(
            wireNames(
                EventType.values(), EventType::wireName, t -> t.kind() == EventType.Kind.RESOURCE));
    assertThat(EVENT.at("/then/properties/resource/type").textValue()).isEqualTo("string");
  }

  @Test
  void commandConditionalsMatchTheJavaFlags() {
    assertThat(texts(COMMAND.at("/allOf/0/if/properties/commandType/enum")))
        .containsExactlyInAnyOrderElementsOf(
            wireNames(CommandType.values(), CommandType::wireName, CommandType::requiresProject));
    assertThat(COMMAND.at("/allOf/0/then/properties/projectId/type").textValue())
        .isEqualTo("string");
    assertThat(texts(COMMAND.at("/allOf/1/if/properties/commandType/enum")))
        .containsExactlyInAnyOrderElementsOf(
            wireNames(
                CommandType.values(), CommandType::wireName, CommandType::countsTowardChangeCap));
    assertThat(COMMAND.at("/allOf/1/then/properties/changeId/type").textValue())
        .isEqualTo("string");
  }

  @Test
  void patternsEqualIdFormat() {
    assertThat(EVENT.at("/properties/eventId/pattern").textValue()).isEqualTo(IdFormat.EVENT_ID);
    assertThat(EVENT.at("/properties/resource/pattern").textValue()).isEqualTo(IdFormat.RESOURCE);
    assertThat(EVENT.at("/properties/causedBy/pattern").textValue()).isEqualTo(IdFormat.REFERENCE);
    assertThat(EVENT.at("/properties/correlationId/pattern").textValue())
        .isEqualTo(IdFormat.REFERENCE);
    assertThat(COMMAND.at("/properties/commandId/pattern").textValue())
        .isEqualTo(IdFormat.COMMAND_ID);
    assertThat(COMMAND.at("/properties/deadline/pattern").textValue())
        .isEqualTo(IdFormat.TIMESTAMP);
    for (JsonNode schema : List.of(EVENT, COMMAND)) {
      assertThat(schema.at("/$defs/id/pattern").textValue()).isEqualTo(IdFormat.ID);
      assertThat(schema.at("/$defs/optionalId/pattern").textValue()).isEqualTo(IdFormat.ID);
    }
    for (JsonNode schema : List.of(EVENT, COMMAND, DEAD_LETTER)) {
      assertThat(schema.at("/$defs/timestamp/pattern").textValue()).isEqualTo(IdFormat.TIMESTAMP);
      assertThat(schema.at("/$defs/timestamp/format").textValue()).isEqualTo("date-time");
    }
  }

  @Test
  void numericBoundsEqualTheConstructors() {
    assertThat(EVENT.at("/properties/canonicalGeneration/maximum").longValue())
        .isEqualTo(Check.MAX_SAFE_INTEGER);
    assertThat(DEAD_LETTER.at("/properties/error/maxLength").intValue())
        .isEqualTo(DeadLetterMessage.MAX_ERROR_CHARS);
  }

  private static void assertRequiredFields(JsonNode schema, Class<? extends Record> record) {
    List<String> components =
        Arrays.stream(record.getRecordComponents())
            .map(c -> c.getName())
            .collect(Collectors.toList());
    List<String> properties = new ArrayList<>();
    schema.get("properties").fieldNames().forEachRemaining(properties::add);

    assertThat(texts(schema.get("required")))
        .as(record.getSimpleName())
        .containsExactlyElementsOf(components);
    assertThat(properties).as(record.getSimpleName()).containsExactlyElementsOf(components);
  }

  private static List<String> texts(JsonNode array) {
    List<String> texts = new ArrayList<>();
    array.forEach(n -> texts.add(n.textValue()));
    return texts;
  }

  @SafeVarargs
  private static <T> List<String> wireNames(
      T[] values, java.util.function.Function<T, String> name, Predicate<T>... filters) {
    return Arrays.stream(values)
        .filter(v -> Arrays.stream(filters).allMatch(f -> f.test(v)))
        .map(name)
        .collect(Collectors.toList());
  }
}
