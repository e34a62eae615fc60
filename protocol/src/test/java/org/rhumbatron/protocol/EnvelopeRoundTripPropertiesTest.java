package org.rhumbatron.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** Any valid envelope survives encode then decode unchanged, and encodes the same way again. */
class EnvelopeRoundTripPropertiesTest {

  private final EnvelopeCodec codec = new EnvelopeCodec();

  @Property(tries = 300)
  void eventsRoundTrip(@ForAll("events") Event event) {
    byte[] json = codec.encodeEvent(event);
    Event decoded = codec.decodeEvent(json);

    assertThat(decoded).isEqualTo(event);
    assertThat(codec.encodeEvent(decoded)).isEqualTo(json);
  }

  @Property(tries = 300)
  void commandsRoundTrip(@ForAll("commands") Command command) {
    byte[] json = codec.encodeCommand(command);
    Command decoded = codec.decodeCommand(json);

    assertThat(decoded).isEqualTo(command);
    assertThat(codec.encodeCommand(decoded)).isEqualTo(json);
  }

  @Property(tries = 200)
  void deadLettersRoundTrip(@ForAll("deadLetters") DeadLetterMessage message) {
    assertThat(codec.decodeDeadLetter(codec.encodeDeadLetter(message))).isEqualTo(message);
  }

  @Provide
  Arbitrary<Event> events() {
    return EnvelopeArbitraries.events();
  }

  @Provide
  Arbitrary<Command> commands() {
    return EnvelopeArbitraries.commands();
  }

  @Provide
  Arbitrary<DeadLetterMessage> deadLetters() {
    return EnvelopeArbitraries.deadLetters();
  }
}
