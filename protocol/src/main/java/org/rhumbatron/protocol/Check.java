package org.rhumbatron.protocol;

import java.time.Instant;
import java.util.regex.Pattern;

/**
 * The constructor checks of the envelopes. Each throws {@link EnvelopeException} naming the field,
 * so a record that exists is one the schema accepts (the payload size aside, which the codec owns).
 */
final class Check {

  /** The smallest and largest instants that an RFC 3339 timestamp (4-digit year) can write. */
  static final Instant MIN_TIMESTAMP = Instant.parse("0000-01-01T00:00:00Z");

  static final Instant MAX_TIMESTAMP = Instant.parse("9999-12-31T23:59:59.999999999Z");

  /** The largest integer that JavaScript and JSON Schema tools in every language keep exact. */
  static final long MAX_SAFE_INTEGER = 9_007_199_254_740_991L;

  private Check() {}

  static <T> T required(String field, T value) {
    if (value == null) {
      throw new EnvelopeException(field, EnvelopeException.REQUIRED, "must not be null");
    }
    return value;
  }

  static String id(String field, String value) {
    return matching(field, required(field, value), IdFormat.ID_PATTERN);
  }

  static String optionalId(String field, String value) {
    return value == null ? null : matching(field, value, IdFormat.ID_PATTERN);
  }

  static String matching(String field, String value, Pattern pattern) {
    if (value != null && !IdFormat.matches(pattern, value)) {
      throw new EnvelopeException(
          field,
          EnvelopeException.PATTERN,
          "\"" + abbreviate(value) + "\" does not match " + pattern.pattern());
    }
    return value;
  }

  static int atLeast(String field, int value, int minimum) {
    if (value < minimum) {
      throw new EnvelopeException(
          field, EnvelopeException.MINIMUM, value + " is below the minimum " + minimum);
    }
    return value;
  }

  static Long optionalGeneration(String field, Long value) {
    if (value != null && (value < 0 || value > MAX_SAFE_INTEGER)) {
      throw new EnvelopeException(
          field,
          value < 0 ? EnvelopeException.MINIMUM : EnvelopeException.MAXIMUM,
          value + " is outside 0.." + MAX_SAFE_INTEGER);
    }
    return value;
  }

  static Instant timestamp(String field, Instant value) {
    required(field, value);
    return optionalTimestamp(field, value);
  }

  static Instant optionalTimestamp(String field, Instant value) {
    if (value != null && (value.isBefore(MIN_TIMESTAMP) || value.isAfter(MAX_TIMESTAMP))) {
      throw new EnvelopeException(
          field, EnvelopeException.RANGE, value + " is outside the years 0000 to 9999");
    }
    return value;
  }

  /**
   * Rejects a string with an unpaired surrogate: it has no UTF-8 form, so the JSON writer would
   * fail on it later, far from the code that made it.
   */
  static String wellFormed(String field, String value) {
    int bad = firstUnpairedSurrogate(value);
    if (bad >= 0) {
      throw new EnvelopeException(
          field, EnvelopeException.UNICODE, "unpaired surrogate at index " + bad);
    }
    return value;
  }

  /** Replaces unpaired surrogates with U+FFFD, as a UTF-8 decoder would. */
  static String replaceUnpairedSurrogates(String value) {
    if (firstUnpairedSurrogate(value) < 0) {
      return value;
    }
    StringBuilder out = new StringBuilder(value.length());
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < value.length()
          && Character.isLowSurrogate(value.charAt(i + 1))) {
        out.append(c).append(value.charAt(++i));
      } else {
        out.append(Character.isSurrogate(c) ? '\uFFFD' : c);
      }
    }
    return out.toString();
  }

  static int firstUnpairedSurrogate(String value) {
    if (value == null) {
      return -1;
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < value.length()
          && Character.isLowSurrogate(value.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return i;
      }
    }
    return -1;
  }

  /** Cuts a value for an error message: the message may end up in a log line or an HTTP body. */
  static String abbreviate(String value) {
    return value.length() <= 80 ? value : value.substring(0, 77) + "...";
  }
}
