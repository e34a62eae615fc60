package org.rhumbatron.platform.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Properties;

/**
 * What each {@link Setting} does and where its default comes from, kept in {@code
 * setting-docs.properties} beside this class so that the registry stays a list of typed defaults.
 * docs/settings.md is generated from both.
 */
public final class SettingDocs {
  /** The description of one setting. */
  public record Doc(String source, String description) {}

  private static final Properties DOCS = load();

  private SettingDocs() {}

  /** The setting's doc, or empty when the file has no line for it. */
  public static Optional<Doc> of(Setting<?> setting) {
    String line = DOCS.getProperty(setting.key());
    if (line == null) {
      // The queues' settings share one line per field: queues.<queue>.batch -> queues.*.batch.
      line = DOCS.getProperty(setting.key().replaceFirst("^queues\\.[a-z-]+\\.", "queues.*."));
    }
    if (line == null) {
      return Optional.empty();
    }
    int bar = line.indexOf('|');
    if (bar < 0) {
      throw new IllegalStateException(setting.key() + ": no 'source | description' in its doc");
    }
    return Optional.of(new Doc(line.substring(0, bar).trim(), line.substring(bar + 1).trim()));
  }

  private static Properties load() {
    Properties p = new Properties();
    try (InputStream in = SettingDocs.class.getResourceAsStream("setting-docs.properties")) {
      if (in == null) {
        throw new IllegalStateException("setting-docs.properties is missing from the jar");
      }
      p.load(new InputStreamReader(in, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p;
  }
}
