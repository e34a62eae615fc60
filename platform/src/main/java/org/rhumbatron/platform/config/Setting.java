package org.rhumbatron.platform.config;

import java.time.Duration;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One named setting: its key (as written in a settings file), its default from the seed, how it
 * parses and which values are allowed.
 */
public record Setting<T>(
    String key, T defaultValue, Function<String, T> parser, Predicate<T> valid, String rule) {

  /** The environment variable that overrides this key: RHUMBATRON_ + key in upper snake case. */
  public String envName() {
    return "RHUMBATRON_" + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
  }

  T parse(String raw) {
    T value;
    try {
      value = parser.apply(raw.trim());
    } catch (RuntimeException e) {
      throw new SettingsException(key, "cannot parse '" + raw + "': " + rule);
    }
    if (!valid.test(value)) {
      throw new SettingsException(key, "'" + raw + "' is out of range: " + rule);
    }
    return value;
  }

  static Setting<Integer> positiveInt(String key, int defaultValue) {
    return new Setting<>(key, defaultValue, Integer::parseInt, v -> v > 0, "a whole number > 0");
  }

  static Setting<Integer> intRange(String key, int defaultValue, int min, int max) {
    return new Setting<>(
        key,
        defaultValue,
        Integer::parseInt,
        v -> v >= min && v <= max,
        "a whole number in " + min + ".." + max);
  }

  static Setting<Double> probability(String key, double defaultValue) {
    return new Setting<>(
        key, defaultValue, Double::parseDouble, v -> v >= 0 && v <= 1, "a number in 0..1");
  }

  static Setting<Duration> duration(String key, Duration defaultValue) {
    return new Setting<>(
        key,
        defaultValue,
        Setting::parseDuration,
        d -> !d.isNegative() && !d.isZero(),
        "a positive duration like 500ms, 30s, 5m, 2h, 7d or PT30S");
  }

  /** true or false. */
  static Setting<Boolean> bool(String key, boolean defaultValue) {
    return new Setting<>(
        key,
        defaultValue,
        raw -> {
          if (!raw.equalsIgnoreCase("true") && !raw.equalsIgnoreCase("false")) {
            throw new IllegalArgumentException(raw);
          }
          return Boolean.parseBoolean(raw);
        },
        v -> true,
        "true or false");
  }

  /** A duration that may be zero (e.g. a simulated delay a benchmark sets to nothing). */
  static Setting<Duration> nonNegativeDuration(String key, Duration defaultValue) {
    return new Setting<>(
        key,
        defaultValue,
        Setting::parseDuration,
        d -> !d.isNegative(),
        "a duration of 0 or more like 0ms, 500ms, 30s or PT1S");
  }

  /** One constant of {@code E}, written in lower case ({@code directory}, {@code nats}). */
  static <E extends Enum<E>> Setting<E> oneOf(String key, E defaultValue) {
    Class<E> type = defaultValue.getDeclaringClass();
    StringBuilder names = new StringBuilder();
    for (E e : type.getEnumConstants()) {
      names.append(names.length() == 0 ? "" : ", ").append(e.name().toLowerCase(Locale.ROOT));
    }
    return new Setting<>(
        key,
        defaultValue,
        raw -> Enum.valueOf(type, raw.toUpperCase(Locale.ROOT).replace('-', '_')),
        v -> true,
        "one of " + names);
  }

  /** Parses 500ms, 30s, 5m, 2h, 7d, or an ISO-8601 duration. */
  static Duration parseDuration(String raw) {
    String s = raw.trim().toLowerCase(Locale.ROOT);
    if (s.startsWith("p")) {
      return Duration.parse(s.toUpperCase(Locale.ROOT));
    }
    if (s.endsWith("ms")) {
      return Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2)));
    }
    long n = Long.parseLong(s.substring(0, s.length() - 1));
    return switch (s.charAt(s.length() - 1)) {
      case 's' -> Duration.ofSeconds(n);
      case 'm' -> Duration.ofMinutes(n);
      case 'h' -> Duration.ofHours(n);
      case 'd' -> Duration.ofDays(n);
      default -> throw new IllegalArgumentException("unit");
    };
  }
}
