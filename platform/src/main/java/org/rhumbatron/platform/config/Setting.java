package org.rhumbatron.platform.config;

import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.Predicate;
import org.rhumbatron.platform.jetstream.NatsUrls;

/**
 * One named setting: its key (as written in a settings file), its default from the seed, how it
 * parses and which values are allowed.
 */
public record Setting<T>(
    String key,
    T defaultValue,
    Function<String, T> parser,
    Predicate<T> valid,
    String rule,
    boolean echoesValue) {

  /** A setting whose errors quote the bad value. */
  public Setting(
      String key, T defaultValue, Function<String, T> parser, Predicate<T> valid, String rule) {
    this(key, defaultValue, parser, valid, rule, true);
  }

  /** How an error shows a bad value: quoted, or not at all where a secret may be misplaced. */
  String shown(Object value) {
    return echoesValue ? "'" + value + "'" : "the value";
  }

  /** The environment variable that overrides this key: RHUMBATRON_ + key in upper snake case. */
  public String envName() {
    return "RHUMBATRON_" + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
  }

  T parse(String raw) {
    if (raw.isBlank()) {
      // "key=" in a file or an empty variable is a mistake, not a way to ask for the default.
      throw new SettingsException(key, "is empty: " + rule);
    }
    T value;
    try {
      value = parser.apply(raw.trim());
    } catch (SettingsException e) {
      throw e; // a parser that names the bad part itself
    } catch (RuntimeException e) {
      throw new SettingsException(key, "cannot parse " + shown(raw) + ": " + rule);
    }
    if (!valid.test(value)) {
      throw new SettingsException(key, shown(raw) + " is out of range: " + rule);
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

  /** A non-blank text, e.g. a model name. */
  static Setting<String> text(String key, String defaultValue) {
    return new Setting<>(key, defaultValue, raw -> raw, v -> !v.isBlank(), "a non-empty text");
  }

  /**
   * A name of letters, digits, '.', '_' and '-' (at most 64), empty by default: none given, and the
   * user of the setting makes one (e.g. a fresh node id per start).
   */
  static Setting<String> optionalName(String key) {
    return new Setting<>(
        key,
        "",
        raw -> raw,
        v -> v.matches("[A-Za-z0-9._-]{1,64}"),
        "1 to 64 letters, digits, '.', '_' or '-'");
  }

  /** An absolute http or https URL without a trailing slash, e.g. an API's base URL. */
  static Setting<String> httpUrl(String key, String defaultValue) {
    return new Setting<>(
        key,
        defaultValue,
        raw -> {
          URI uri = URI.create(raw);
          if (uri.getHost() == null
              || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))) {
            throw new IllegalArgumentException(raw);
          }
          return raw.endsWith("/") ? raw.substring(0, raw.length() - 1) : raw;
        },
        v -> true,
        "an http or https URL like https://api.anthropic.com");
  }

  /**
   * The name of an environment variable. A bad value is not quoted in the error: it may be the
   * secret itself, written where its variable's name belongs.
   */
  static Setting<String> environmentVariableName(String key, String defaultValue) {
    return new Setting<>(
        key,
        defaultValue,
        raw -> raw,
        v -> v.matches("[A-Za-z_][A-Za-z0-9_]*"),
        "the name of an environment variable (letters, digits and _), not its value",
        false);
  }

  /**
   * A secret such as a bearer token: empty by default (none), never quoted in an error or shown by
   * {@link Settings#describe}.
   */
  static Setting<String> secret(String key) {
    String envName = new Setting<>(key, "", raw -> raw, v -> true, "", false).envName();
    return new Setting<>(
        key,
        "",
        raw -> raw,
        v -> !v.isBlank(),
        "give a value, or leave out both " + key + " and " + envName + " to run without one",
        false);
  }

  /** A host name or an IP address to listen on, like 127.0.0.1, 0.0.0.0, :: or core.internal. */
  static Setting<String> host(String key, String defaultValue) {
    return new Setting<>(
        key,
        defaultValue,
        raw -> raw,
        v -> v.matches("[A-Za-z0-9.:%_-]{1,253}"),
        "a host name or an IP address like 127.0.0.1, 0.0.0.0 or ::");
  }

  /** The path of a file, empty by default: none given. */
  static Setting<String> optionalFile(String key) {
    return new Setting<>(
        key, "", raw -> raw, v -> !v.isBlank(), "the path of a file, like /etc/rhumbatron/a.pem");
  }

  /** An http or https URL like {@link #httpUrl}, empty by default: none configured. */
  static Setting<String> optionalHttpUrl(String key) {
    Setting<String> url = httpUrl(key, "");
    return new Setting<>(
        key, "", url.parser(), v -> true, "an http or https URL like http://127.0.0.1:9000/wake");
  }

  /**
   * NATS server URLs, comma separated (a cluster's); empty by default: none given. An error names
   * the bad entry; the settings dump hides the value.
   */
  static Setting<String> natsUrls(String key) {
    return new Setting<>(
        key,
        "",
        raw -> {
          try {
            return String.join(",", NatsUrls.parse(raw));
          } catch (IllegalArgumentException e) {
            throw new SettingsException(key, e.getMessage());
          }
        },
        v -> true,
        "NATS URLs like nats://10.0.0.1:4222,nats://10.0.0.2:4222",
        false); // a URL may carry a user's password: not in the settings dump
  }

  /** A text such as a user name, empty by default: none given. */
  static Setting<String> optionalText(String key) {
    return new Setting<>(key, "", raw -> raw, v -> true, "a non-empty text");
  }

  /**
   * The path of a readable file (a CA, a creds file, a password file), empty by default: none
   * given. A bad value is not quoted: it may be the secret itself, written where its path belongs.
   */
  static Setting<String> readableFile(String key) {
    return new Setting<>(
        key,
        "",
        raw -> raw,
        v -> v.isEmpty() || java.nio.file.Files.isReadable(java.nio.file.Path.of(v)),
        "the path of a readable file",
        false);
  }

  /** The forms {@link #parseDuration} accepts, as its errors name them. */
  static final String DURATION_FORMS = "a number and a unit: 500ms, 30s, 5m, 2h, 7d, or PT30S";

  /**
   * Parses 500ms, 30s, 5m, 2h, 7d, or an ISO-8601 duration. A bad value is an {@link
   * IllegalArgumentException} whose message names the accepted forms; a bare number is refused
   * rather than guessed at (seconds? milliseconds?), and the message says how to write it.
   */
  public static Duration parseDuration(String raw) {
    String s = raw.trim().toLowerCase(Locale.ROOT);
    if (s.matches("-?\\d+")) {
      throw new IllegalArgumentException(
          "no unit: write " + s + "s for seconds (" + DURATION_FORMS + ")");
    }
    try {
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
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("not a duration: " + DURATION_FORMS);
    }
  }
}
