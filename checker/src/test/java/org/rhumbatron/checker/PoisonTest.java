package org.rhumbatron.checker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.EnvelopeException;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Queue;

/**
 * What the checker expects of each poison kind rests on whether it decodes: the kinds it counts as
 * undecodable are rejected by the envelope's rules on an event stream and on every queue, whatever
 * the seed, and the rest decode.
 */
class PoisonTest {
  private final EnvelopeCodec codec = new EnvelopeCodec();

  @Test
  void theUndecodableKindsNeverDecodeAndTheOthersDo() throws Exception {
    assertThat(Poison.KINDS).containsAll(Poison.UNDECODABLE);
    for (long seed = 0; seed < 8; seed++) {
      Poison poison = new Poison("test", seed);
      for (String kind : Poison.KINDS) {
        String event = EventStreams.streamSubject((int) seed);
        Poison.Body body = poison.body(kind, "poison-test-" + seed, true, event);
        if (Poison.UNDECODABLE.contains(kind)) {
          assertThatThrownBy(() -> codec.decodeEvent(body.bytes()))
              .as("%s on %s", kind, event)
              .isInstanceOf(EnvelopeException.class);
        } else {
          assertThat(codec.decodeEvent(body.bytes()).eventId()).isEqualTo(body.decodedId());
        }
        for (Queue q : Queue.values()) {
          Poison.Body command = poison.body(kind, "poison-test-" + seed, false, q.subject());
          if (Poison.UNDECODABLE.contains(kind)) {
            assertThatThrownBy(() -> codec.decodeCommand(command.bytes()))
                .as("%s on %s", kind, q.subject())
                .isInstanceOf(EnvelopeException.class);
            assertThatThrownBy(() -> codec.decodeDeadLetter(command.bytes()))
                .as("%s on %s", kind, q.subject())
                .isInstanceOf(EnvelopeException.class);
          } else {
            assertThat(codec.decodeCommand(command.bytes()).commandId())
                .isEqualTo(command.decodedId());
          }
        }
      }
    }
  }
}
