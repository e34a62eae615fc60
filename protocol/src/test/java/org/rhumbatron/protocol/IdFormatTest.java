package org.rhumbatron.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * IdFormat.matches answers the patterns by loops over the characters; the regexes are the
 * definition (the schemas hold the same texts). Both must give the same answer for every string.
 */
class IdFormatTest {
  private static final List<Pattern> PATTERNS =
      List.of(
          IdFormat.ID_PATTERN,
          IdFormat.REFERENCE_PATTERN,
          IdFormat.EVENT_ID_PATTERN,
          IdFormat.COMMAND_ID_PATTERN,
          IdFormat.RESOURCE_PATTERN,
          Pattern.compile(IdFormat.TIMESTAMP));

  @Property(tries = 3000)
  void theLoopsAnswerAsTheRegexesDo(@ForAll("nearlyValid") String value) {
    for (Pattern p : PATTERNS) {
      boolean regex = p.matcher(value).matches();
      boolean loop =
          p.pattern().equals(IdFormat.TIMESTAMP)
              ? IdFormat.isTimestamp(value)
              : IdFormat.matches(p, value);
      assertThat(loop).as("%s on \"%s\"", p.pattern(), value).isEqualTo(regex);
    }
  }

  @Example
  void theEdgesOfEachPatternAnswerAsTheRegexesDo() {
    List<String> edges = new ArrayList<>();
    for (int n : new int[] {0, 1, 199, 200, 201, 508, 511, 512, 513, 1023, 1024, 1025}) {
      edges.add("a".repeat(n));
      edges.add("cmd_" + "a".repeat(n));
      edges.add("é".repeat(n));
    }
    edges.addAll(
        List.of(
            "evt_0123456789abcdef0123456789abcdef",
            "evt_0123456789ABCDEF0123456789abcdef",
            "evt_0123456789abcdef0123456789abcdef\n",
            "evt_0123456789abcdef0123456789abcde",
            "cmd_",
            "cmd_x",
            "_a",
            "a_",
            "a\n",
            "\n",
            "a b",
            "x\u007f",
            "x\u001f",
            "\ud83d\ude00".repeat(1000),
            "\ud83d\ude00".repeat(513),
            "\ud800",
            "2026-01-01T00:00:00Z",
            "2026-01-01T00:00:00.Z",
            "2026-01-01T00:00:00.1Z",
            "2026-01-01T00:00:00.123456789Z",
            "2026-01-01T00:00:00.1234567890Z",
            "2026-01-01T00:00:00Z\n",
            "2026-01-01 00:00:00Z",
            "2026-1-01T00:00:00Z"));
    for (String value : edges) {
      theLoopsAnswerAsTheRegexesDo(value);
    }
  }

  @Provide
  Arbitrary<String> nearlyValid() {
    Arbitrary<String> prefix = Arbitraries.of("", "evt_", "cmd_", "2026-01-01T00:00:00", "a", "_");
    Arbitrary<String> body =
        Arbitraries.strings()
            .withChars("abcdefABCXYZ0189_.:-/ \n\t\u007f\u0000é\ud800\udc00Z.T")
            .ofMinLength(0)
            .ofMaxLength(40);
    Arbitrary<String> hex = Arbitraries.strings().withChars("0123456789abcdefg").ofLength(32);
    Arbitrary<String> fraction =
        Arbitraries.strings().numeric().ofMinLength(0).ofMaxLength(11).map(f -> "." + f + "Z");
    return Arbitraries.oneOf(
        Combinators.combine(prefix, body).as(String::concat),
        hex.map(h -> "evt_" + h),
        fraction.map(f -> "2026-01-01T00:00:00" + f),
        body);
  }
}
