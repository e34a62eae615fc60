package org.rhumbatron.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * Published FNV-1a vectors, and stream indexes computed outside Java (a few lines of Python over
 * the UTF-8 bytes), so that a Project keeps its stream across implementations.
 */
class Fnv1aTest {

  @Test
  void publishedVectors() {
    assertThat(Fnv1a.fnv1a32("")).isEqualTo(0x811c9dc5);
    assertThat(Fnv1a.fnv1a32("a")).isEqualTo(0xe40c292c);
    assertThat(Fnv1a.fnv1a32("foobar")).isEqualTo(0xbf9cf968);
  }

  @Test
  void hashesUtf8Bytes() {
    assertThat(Fnv1a.fnv1a32("é")).isEqualTo(0x1e9de8c1);
  }

  @Test
  void resultIsUnsignedInAnInt() {
    assertThat(Integer.toUnsignedLong(Fnv1a.fnv1a32(""))).isEqualTo(2166136261L);
  }

  @Test
  void streamIndexVectors() {
    assertThat(EventStreams.streamIndex("")).isEqualTo(5);
    assertThat(EventStreams.streamIndex("a")).isEqualTo(4);
    assertThat(EventStreams.streamIndex("foobar")).isEqualTo(0);
    assertThat(EventStreams.streamIndex("proj_1")).isEqualTo(6);
    assertThat(EventStreams.streamIndex("proj_2")).isEqualTo(3);
    assertThat(EventStreams.streamIndex("project-alpha")).isEqualTo(7);
    assertThat(EventStreams.streamIndex("p")).isEqualTo(7);
  }

  @Test
  void bucketIsTheUnsignedRemainder() {
    // fnv1a32("a") is negative as an int; a signed % would give a negative shard.
    assertThat(Fnv1a.bucket("a", 3)).isEqualTo((int) (0xe40c292cL % 3));
    assertThatThrownBy(() -> Fnv1a.bucket("a", 0)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void streamNames() {
    assertThat(EventStreams.STREAM_COUNT).isEqualTo(8);
    assertThat(EventStreams.streamName(0)).isEqualTo("EVENTS_00");
    assertThat(EventStreams.streamName(7)).isEqualTo("EVENTS_07");
    assertThat(EventStreams.streamSubject(3)).isEqualTo("events.03");
    assertThatThrownBy(() -> EventStreams.streamName(8))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> EventStreams.streamSubject(-1))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
