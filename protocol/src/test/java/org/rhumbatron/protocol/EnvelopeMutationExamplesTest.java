package org.rhumbatron.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.function.Function;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

/**
 * Every field of both envelopes, dropped or given every wrong value the property test draws from:
 * the exhaustive counterpart of {@link EnvelopeMutationPropertiesTest}, which varies the envelopes
 * themselves. One type per case of the schemas' conditionals (router kind, no project, capped,
 * workflow) stands for all.
 */
class EnvelopeMutationExamplesTest {

  private static final List<EventType> EVENT_TYPES =
      List.of(EventType.TASK_COMPLETED, EventType.CLAIM_EXPIRED, EventType.PROJECT_CREATED);
  private static final List<CommandType> COMMAND_TYPES =
      List.of(
          CommandType.AGENT_WAKE,
          CommandType.FORKS_SWEEP,
          CommandType.INDEX_BUILD,
          CommandType.VERIFICATION_START);

  private final EnvelopeCodec codec = new EnvelopeCodec();

  @Test
  void everyEventFieldIsNamedWhenDroppedOrWronglyTyped() {
    SoftAssertions softly = new SoftAssertions();
    for (EventType type : EVENT_TYPES) {
      ObjectNode valid = Samples.tree(codec.encodeEvent(Samples.event(type)));
      check(
          softly,
          type.wireName(),
          valid,
          EnvelopeMutationPropertiesTest.EVENT_FIELDS,
          codec::decodeEvent);
    }
    softly.assertAll();
  }

  @Test
  void everyCommandFieldIsNamedWhenDroppedOrWronglyTyped() {
    SoftAssertions softly = new SoftAssertions();
    for (CommandType type : COMMAND_TYPES) {
      ObjectNode valid = Samples.tree(codec.encodeCommand(Samples.command(type)));
      check(
          softly,
          type.wireName(),
          valid,
          EnvelopeMutationPropertiesTest.COMMAND_FIELDS,
          codec::decodeCommand);
    }
    softly.assertAll();
  }

  private static void check(
      SoftAssertions softly,
      String type,
      ObjectNode valid,
      List<String> fields,
      Function<byte[], Object> decoder) {
    for (String field : fields) {
      ObjectNode dropped = valid.deepCopy();
      dropped.remove(field);
      expectNamed(softly, type + " without " + field, decoder, dropped, field);
      for (JsonNode wrong : EnvelopeMutationPropertiesTest.wrongValues(field)) {
        ObjectNode broken = valid.deepCopy();
        broken.set(field, wrong);
        expectNamed(softly, type + " with " + field + "=" + wrong, decoder, broken, field);
      }
    }
  }

  private static void expectNamed(
      SoftAssertions softly,
      String description,
      Function<byte[], Object> decoder,
      ObjectNode tree,
      String field) {
    Throwable thrown = catchThrowable(() -> decoder.apply(Samples.bytes(tree)));
    softly.assertThat(thrown).as(description).isInstanceOf(EnvelopeException.class);
    if (thrown instanceof EnvelopeException e) {
      softly.assertThat(e.field()).as(description).isEqualTo("/" + field);
      softly.assertThat(e.getMessage()).as(description).contains("/" + field, e.rule());
    }
  }

  @Test
  void theWrongValuesReallyAreWrongForEveryField() {
    // Guards the guard: a field with no wrong values would make the tests above vacuous.
    for (String field : EnvelopeMutationPropertiesTest.EVENT_FIELDS) {
      assertThat(EnvelopeMutationPropertiesTest.wrongValues(field)).as(field).hasSizeGreaterThan(2);
    }
  }
}
