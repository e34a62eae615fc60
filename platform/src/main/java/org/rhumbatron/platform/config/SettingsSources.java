package org.rhumbatron.platform.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where the values of {@link Settings} come from and how their text is read: a properties file,
 * then environment variables {@code RHUMBATRON_<KEY>}, each value parsed by its setting.
 */
final class SettingsSources {
  private SettingsSources() {}

  /**
   * The {@code RHUMBATRON_} variables that are not settings: the CLI's core URL and CA file, the
   * launcher's JVM options, logback's level.
   */
  static final Set<String> OTHER_VARIABLES =
      Set.of("RHUMBATRON_URL", "RHUMBATRON_CACERT", "RHUMBATRON_JAVA_OPTS", "RHUMBATRON_LOG_LEVEL");

  /** The raw values of {@code file} (may be null), then of {@code env}, by setting key. */
  static Map<String, String> raw(Path file, Map<String, String> env, List<Setting<?>> all) {
    Map<String, String> raw = new LinkedHashMap<>();
    if (file != null) {
      raw.putAll(readFile(file));
    }
    refuseUnknownVariables(env, all);
    for (Setting<?> s : all) {
      String fromEnv = env.get(s.envName());
      if (fromEnv != null) {
        raw.put(s.key(), fromEnv);
      }
    }
    return raw;
  }

  private static Map<String, String> readFile(Path file) {
    Properties props = new Properties();
    try (Reader reader = Files.newBufferedReader(file)) {
      props.load(reader);
    } catch (IOException e) {
      throw SettingsException.unreadableFile(file, e);
    }
    Map<String, String> raw = new LinkedHashMap<>();
    for (String key : props.stringPropertyNames()) {
      raw.put(key, props.getProperty(key));
    }
    return raw;
  }

  /**
   * A {@code RHUMBATRON_} variable that names no setting is refused: a mistyped one would otherwise
   * leave its setting at the default without a word.
   */
  static void refuseUnknownVariables(Map<String, String> env, List<Setting<?>> all) {
    List<String> known = new ArrayList<>(OTHER_VARIABLES);
    all.forEach(s -> known.add(s.envName()));
    for (String name : new TreeSet<>(env.keySet())) {
      if (name.startsWith("RHUMBATRON_") && !known.contains(name)) {
        throw SettingsException.unknownVariable(name, Nearest.of(name, known).orElse(null));
      }
    }
  }

  /** Each raw value parsed by the setting of its key; an unknown key is refused, with a guess. */
  static Map<Setting<?>, Object> parse(Map<String, String> overrides, List<Setting<?>> all) {
    Map<String, Setting<?>> byKey = new HashMap<>();
    all.forEach(s -> byKey.put(s.key(), s));
    Map<Setting<?>, Object> parsed = new HashMap<>();
    overrides.forEach(
        (key, value) -> {
          Setting<?> setting = byKey.get(key);
          if (setting == null) {
            throw new SettingsException(
                key,
                "unknown key"
                    + Nearest.of(key, byKey.keySet())
                        .map(k -> "; did you mean " + k + "?")
                        .orElse(""));
          }
          parsed.put(setting, setting.parse(value));
        });
    return parsed;
  }
}
