package org.rhumbatron.protocol;

import java.time.Instant;

/**
 * The envelope's timestamps in the one form core writes, {@code yyyy-MM-ddTHH:mm:ss[.f]Z} with 3, 6
 * or 9 fraction digits, read and written without {@link java.time.format.DateTimeFormatter}: every
 * consumer decodes several per Event, and the formatter's general parser is the larger part of a
 * decode. Anything outside that form is left to {@link Instant#parse} and {@link Instant#toString},
 * so both give exactly what those would.
 */
final class IsoInstants {
  private static final long SECONDS_PER_DAY = 86_400;
  private static final int[] DAYS_IN_MONTH = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

  private IsoInstants() {}

  /** {@code text} read as an instant; throws as {@link Instant#parse} does for what it refuses. */
  static Instant parse(CharSequence text) {
    Instant fast = parseSimple(text);
    return fast != null ? fast : Instant.parse(text);
  }

  /** {@code Instant.toString()}, for years 0000 to 9999 without the formatter. */
  static String format(Instant instant) {
    long seconds = instant.getEpochSecond();
    long days = Math.floorDiv(seconds, SECONDS_PER_DAY);
    int secondOfDay = (int) Math.floorMod(seconds, SECONDS_PER_DAY);
    // Days from 1970-01-01 to a civil date (Hinnant's civil_from_days), in 400-year eras.
    long z = days + 719_468;
    long era = Math.floorDiv(z, 146_097);
    long dayOfEra = z - era * 146_097;
    long yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365;
    long dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);
    long mp = (5 * dayOfYear + 2) / 153;
    int day = (int) (dayOfYear - (153 * mp + 2) / 5 + 1);
    int month = (int) (mp < 10 ? mp + 3 : mp - 9);
    long year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
    if (year < 0 || year > 9999) {
      return instant.toString();
    }
    int nano = instant.getNano();
    StringBuilder out = new StringBuilder(30);
    digits(out, (int) year, 4).append('-');
    digits(out, month, 2).append('-');
    digits(out, day, 2).append('T');
    digits(out, secondOfDay / 3600, 2).append(':');
    digits(out, secondOfDay / 60 % 60, 2).append(':');
    digits(out, secondOfDay % 60, 2);
    if (nano != 0) {
      out.append('.');
      if (nano % 1_000_000 == 0) {
        digits(out, nano / 1_000_000, 3);
      } else if (nano % 1_000 == 0) {
        digits(out, nano / 1_000, 6);
      } else {
        digits(out, nano, 9);
      }
    }
    return out.append('Z').toString();
  }

  /** The instant of a timestamp of exactly the simple form, or null for any other text. */
  private static Instant parseSimple(CharSequence s) {
    int n = s.length();
    if (n < 20
        || s.charAt(4) != '-'
        || s.charAt(7) != '-'
        || s.charAt(10) != 'T'
        || s.charAt(13) != ':'
        || s.charAt(16) != ':'
        || s.charAt(n - 1) != 'Z') {
      return null;
    }
    int year = number(s, 0, 4);
    int month = number(s, 5, 2);
    int day = number(s, 8, 2);
    int hour = number(s, 11, 2);
    int minute = number(s, 14, 2);
    int second = number(s, 17, 2);
    if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23) {
      return null;
    }
    if (minute < 0 || minute > 59 || second < 0 || second > 59) {
      return null;
    }
    boolean leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    if (day > DAYS_IN_MONTH[month - 1] + (month == 2 && leap ? 1 : 0)) {
      return null;
    }
    int nano = 0;
    if (n > 20) {
      int fraction = n - 21;
      if (s.charAt(19) != '.' || fraction < 1 || fraction > 9) {
        return null;
      }
      nano = number(s, 20, fraction);
      if (nano < 0) {
        return null;
      }
      for (int i = fraction; i < 9; i++) {
        nano *= 10;
      }
    }
    long seconds =
        daysFromCivil(year, month, day) * SECONDS_PER_DAY + hour * 3600L + minute * 60L + second;
    return Instant.ofEpochSecond(seconds, nano);
  }

  /** Days from 1970-01-01 to a proleptic Gregorian date (Hinnant's days_from_civil). */
  private static long daysFromCivil(int year, int month, int day) {
    long y = month <= 2 ? year - 1 : year;
    long era = Math.floorDiv(y, 400);
    long yearOfEra = y - era * 400;
    long dayOfYear = (153L * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
    long dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear;
    return era * 146_097 + dayOfEra - 719_468;
  }

  /** The decimal number in {@code s[from, from + length)}, or -1 if any of it is not a digit. */
  private static int number(CharSequence s, int from, int length) {
    int value = 0;
    for (int i = from; i < from + length; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      value = value * 10 + (c - '0');
    }
    return value;
  }

  private static StringBuilder digits(StringBuilder out, int value, int width) {
    String text = Integer.toString(value);
    for (int i = text.length(); i < width; i++) {
      out.append('0');
    }
    return out.append(text);
  }
}
