package org.rhumbatron.platform.bucket;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rhumbatron.testkit.SettableClock;

/** What every bucket store does; run against the directory and the NATS object store. */
abstract class BucketContract {
  static final Instant T0 = Instant.parse("2026-03-01T10:00:00.123Z");

  final SettableClock clock = new SettableClock(T0);
  Bucket bucket;

  abstract Bucket open(SettableClock clock);

  @BeforeEach
  void openBucket() {
    bucket = open(clock);
  }

  @Test
  void anObjectReadsBackAsItWasPut() {
    bucket.put("events/2026/03/01/stream-03/part-1-ab.ndjson.gz", "one".getBytes(UTF_8));
    assertThat(bucket.get("events/2026/03/01/stream-03/part-1-ab.ndjson.gz"))
        .hasValueSatisfying(b -> assertThat(new String(b, UTF_8)).isEqualTo("one"));
    assertThat(bucket.get("events/2026/03/01/stream-03/missing")).isEmpty();
    assertThat(bucket.get("events/2026")).as("a prefix is not an object").isEmpty();
  }

  @Test
  void aPutOverwritesTheObjectAndItsUploadTime() {
    bucket.put("a/b", "first".getBytes(UTF_8));
    clock.advance(Duration.ofHours(1));
    bucket.put("a/b", "second, longer".getBytes(UTF_8));
    assertThat(bucket.get("a/b"))
        .hasValueSatisfying(b -> assertThat(b).isEqualTo(bytes("second, longer")));
    assertThat(bucket.list(""))
        .containsExactly(new BucketObject("a/b", 14, T0.plus(Duration.ofHours(1))));
  }

  @Test
  void aListingShowsKeysUnderThePrefixInKeyOrderWithTheClocksUploadTime() {
    bucket.put("events/2026/03/02/stream-01/p2", bytes("x"));
    clock.advance(Duration.ofDays(400));
    bucket.put("events/2026/03/01/stream-00/p1", bytes("yy"));
    bucket.put("other/thing", bytes("zzz"));
    assertThat(bucket.list("events/"))
        .containsExactly(
            new BucketObject("events/2026/03/01/stream-00/p1", 2, T0.plus(Duration.ofDays(400))),
            new BucketObject("events/2026/03/02/stream-01/p2", 1, T0));
    assertThat(bucket.list("events/2026/03/02/stream-0"))
        .extracting(BucketObject::key)
        .containsExactly("events/2026/03/02/stream-01/p2");
    assertThat(bucket.list("")).hasSize(3);
    assertThat(bucket.list("nothing/here/")).isEmpty();
  }

  @Test
  void aDeleteRemovesOnlyThatObject() {
    bucket.put("k/1", bytes("1"));
    bucket.put("k/2", bytes("2"));
    assertThat(bucket.delete("k/1")).isTrue();
    assertThat(bucket.delete("k/1")).as("already gone").isFalse();
    assertThat(bucket.get("k/1")).isEmpty();
    assertThat(bucket.list("k/")).extracting(BucketObject::key).containsExactly("k/2");
    assertThat(bucket.delete("k")).as("a prefix is not an object").isFalse();
  }

  @Test
  void anObjectLargerThanOneChunkRoundTrips() {
    byte[] big = new byte[1_000_003];
    new Random(7).nextBytes(big);
    bucket.put("big/object", big);
    assertThat(bucket.get("big/object")).hasValueSatisfying(b -> assertThat(b).isEqualTo(big));
    assertThat(bucket.list("big/"))
        .singleElement()
        .extracting(BucketObject::size)
        .isEqualTo(1_000_003L);
  }

  @Test
  void anEmptyObjectIsAnObject() {
    bucket.put("empty", new byte[0]);
    assertThat(bucket.get("empty")).hasValueSatisfying(b -> assertThat(b).isEmpty());
    assertThat(bucket.list("")).extracting(BucketObject::size).containsExactly(0L);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"", "/etc/passwd", "../outside", "a/../../b", "a//b", "a/", "./a", "a\\b"})
  void aKeyThatCouldLeaveTheBucketIsRefusedByName(String key) {
    assertThatThrownBy(() -> bucket.put(key, bytes("x")))
        .isInstanceOf(BucketException.class)
        .hasMessageContaining("refuses key '" + key + "'");
    assertThatThrownBy(() -> bucket.get(key)).isInstanceOf(BucketException.class);
    assertThatThrownBy(() -> bucket.delete(key)).isInstanceOf(BucketException.class);
  }

  static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }
}
