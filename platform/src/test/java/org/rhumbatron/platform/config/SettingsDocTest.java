package org.rhumbatron.platform.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * docs/settings.md is generated from the {@link Settings} registry and {@link SettingDocs}: this
 * test fails when a setting was added, renamed or its default changed and the file did not follow.
 * {@code -Dsettings.doc.write=true} rewrites the file.
 */
class SettingsDocTest {
  static final Path DOC = Path.of("..", "docs", "settings.md");
  static final String REGENERATE =
      "mvn -B -ntp -q -pl platform -am verify -Dtest=SettingsDocTest"
          + " -Dsurefire.failIfNoSpecifiedTests=false -Dsettings.doc.write=true";

  @Test
  void everySettingHasADescription() {
    List<String> missing = new ArrayList<>();
    for (Setting<?> s : Settings.all()) {
      if (SettingDocs.of(s).isEmpty()) {
        missing.add(s.key());
      }
    }
    assertThat(missing)
        .as(
            "settings without a line in platform/src/main/resources/org/rhumbatron/platform/"
                + "config/setting-docs.properties (key = source | description)")
        .isEmpty();
  }

  @Test
  void docsSettingsMdIsWhatTheRegistryGenerates() throws IOException {
    String generated = generate();
    if (Boolean.getBoolean("settings.doc.write")) {
      Files.writeString(DOC, generated, StandardCharsets.UTF_8);
    }
    String onDisk = Files.exists(DOC) ? Files.readString(DOC, StandardCharsets.UTF_8) : "";
    assertThat(onDisk)
        .as(
            "docs/settings.md does not match the Settings registry (a setting was added, renamed"
                + " or its default changed); regenerate it with: "
                + REGENERATE)
        .isEqualTo(generated);
  }

  static String generate() {
    StringBuilder out = new StringBuilder();
    out.append("# Settings\n\n");
    out.append(
        "<!-- Generated from the Settings registry by SettingsDocTest; do not edit. -->\n\n");
    out.append(
        """
        Every number and switch of core is a setting with a default. Set one in a properties file
        given with `--config` (`router.nack-delay=45s`) or with its environment variable, which
        wins over the file (`RHUMBATRON_ROUTER_NACK_DELAY=45s`). A bad value, an empty one or an
        unknown name stops core at start with one line naming it. Durations take `500ms`, `30s`,
        `5m`, `2h`, `7d` or ISO-8601 (`PT30S`); a bare number is refused.

        *From* says where a default comes from: `seed` and the section of the events-and-commands
        specification that fixes the number, or `core` for core's own choice.
        [operations.md](operations.md) tells which settings change for three nodes.
        """);
    String group = null;
    for (Setting<?> s : Settings.all()) {
      String g = s.key().substring(0, s.key().indexOf('.'));
      if (!g.equals(group)) {
        group = g;
        out.append("\n## ").append(g).append("\n\n");
        out.append("| setting | variable | default | unit | from | what it does |\n");
        out.append("| --- | --- | --- | --- | --- | --- |\n");
      }
      SettingDocs.Doc doc =
          SettingDocs.of(s).orElse(new SettingDocs.Doc("?", "(no description yet)"));
      out.append("| `")
          .append(s.key())
          .append("` | `")
          .append(s.envName())
          .append("` | ")
          .append(shownDefault(s))
          .append(" | ")
          .append(unit(s))
          .append(" | ")
          .append(doc.source())
          .append(" | ")
          .append(doc.description().replace("|", "\\|"))
          .append(" |\n");
    }
    return out.toString();
  }

  private static String shownDefault(Setting<?> s) {
    Object v = s.defaultValue();
    if (v instanceof Duration d) {
      return "`" + duration(d) + "`";
    }
    if (v instanceof Enum<?> e) {
      return "`" + e.name().toLowerCase(Locale.ROOT) + "`";
    }
    if (v instanceof Double x) {
      return "`" + (x == Math.rint(x) ? Long.toString(x.longValue()) : x.toString()) + "`";
    }
    String text = String.valueOf(v);
    return text.isEmpty() ? "(none)" : "`" + text + "`";
  }

  /** The largest unit that writes the duration whole, as a settings file would. */
  static String duration(Duration d) {
    long ms = d.toMillis();
    if (ms == 0) {
      return "0ms";
    }
    long[] sizes = {86_400_000L, 3_600_000L, 60_000L, 1_000L};
    String[] units = {"d", "h", "m", "s"};
    for (int i = 0; i < sizes.length; i++) {
      if (ms % sizes[i] == 0) {
        return ms / sizes[i] + units[i];
      }
    }
    return ms + "ms";
  }

  private static String unit(Setting<?> s) {
    Object v = s.defaultValue();
    if (s.rule().startsWith("give a value")) {
      return "secret";
    }
    if (v instanceof Duration) {
      return s.rule().startsWith("a positive") ? "duration > 0" : "duration ≥ 0";
    }
    if (v instanceof Boolean) {
      return "true or false";
    }
    String rule = s.rule().replaceFirst("^an? ", "");
    int cut = rule.indexOf(" like ");
    rule = cut > 0 ? rule.substring(0, cut) : rule;
    cut = rule.indexOf(" (");
    return cut > 0 ? rule.substring(0, cut) : rule;
  }
}
