package org.rhumbatron.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.DateTimeException;
import java.time.Instant;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/** The envelope's timestamps read and written exactly as {@link Instant} reads and writes them. */
class IsoInstantsTest {
  private static final long MIN = Instant.parse("0000-01-01T00:00:00Z").getEpochSecond();
  private static final long MAX = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();

  @Property(tries = 5000)
  void writesWhatInstantWritesAndReadsItBack(
      @ForAll @LongRange(min = -62_167_219_200L, max = 253_402_300_799L) long second,
      @ForAll @IntRange(max = 999_999_999) int nano,
      @ForAll @IntRange(max = 3) int precision) {
    int kept =
        switch (precision) {
          case 0 -> 0;
          case 1 -> nano / 1_000_000 * 1_000_000;
          case 2 -> nano / 1_000 * 1_000;
          default -> nano;
        };
    Instant instant = Instant.ofEpochSecond(second, kept);
    String written = IsoInstants.format(instant);
    assertThat(written).isEqualTo(instant.toString());
    assertThat(IsoInstants.parse(written)).isEqualTo(instant);
  }

  @Property(tries = 2000)
  void readsEveryFractionLengthAsInstantDoes(
      @ForAll @LongRange(min = -62_167_219_200L, max = 253_402_300_799L) long second,
      @ForAll @IntRange(min = 1, max = 9) int digits,
      @ForAll @IntRange(max = 999_999_999) int fraction) {
    String base = Instant.ofEpochSecond(second).toString();
    String digitsText = String.format("%09d", fraction).substring(0, digits);
    String text = base.substring(0, base.length() - 1) + "." + digitsText + "Z";
    assertThat(IsoInstants.parse(text)).isEqualTo(Instant.parse(text));
  }

  @Test
  void calendarEdgesMatchInstant() {
    for (String text :
        List.of(
            "1970-01-01T00:00:00Z",
            "1969-12-31T23:59:59.999Z",
            "0000-01-01T00:00:00Z",
            "0000-02-29T12:00:00Z",
            "2000-02-29T00:00:00Z",
            "2024-02-29T23:59:59.5Z",
            "9999-12-31T23:59:59.999999999Z",
            "2026-12-08T01:02:03.000Z",
            "2016-12-31T23:59:60Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:00:00.Z",
            "2026-01-01t00:00:00z",
            "2026-01-01T00:00:00+01:00")) {
      assertThat(IsoInstants.parse(text)).as(text).isEqualTo(Instant.parse(text));
    }
    assertThat(IsoInstants.format(Instant.ofEpochSecond(MIN))).isEqualTo("0000-01-01T00:00:00Z");
    assertThat(IsoInstants.format(Instant.ofEpochSecond(MAX))).isEqualTo("9999-12-31T23:59:59Z");
    assertThat(IsoInstants.format(Instant.ofEpochSecond(MAX + 1)))
        .isEqualTo(Instant.ofEpochSecond(MAX + 1).toString());
    assertThat(IsoInstants.format(Instant.ofEpochSecond(MIN - 1)))
        .isEqualTo(Instant.ofEpochSecond(MIN - 1).toString());
  }

  @Test
  void refusesWhatInstantRefuses() {
    for (String text :
        List.of(
            "1900-02-29T00:00:00Z",
            "2026-02-30T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-00-10T00:00:00Z",
            "2026-01-01T25:00:00Z",
            "2026-01-01T00:60:00Z",
            "2026-01-01T00:00:61Z",
            "2026-01-01T00:00Z",
            "2026-01-01T00:00:00.1234567891Z",
            "2026-01-01T00:00:00.12a4Z",
            "2026-01-01 00:00:00Z",
            "20x6-01-01T00:00:00Z",
            "2026-01-01T00:00:00")) {
      assertThatThrownBy(() -> Instant.parse(text)).as(text).isInstanceOf(DateTimeException.class);
      assertThatThrownBy(() -> IsoInstants.parse(text))
          .as(text)
          .isInstanceOf(DateTimeException.class);
    }
  }
}
