package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/cli.md shows each command's {@code --help} as the command prints it: the help text is the
 * one source, and this test fails when the doc's copy is stale. {@code -Dcli.doc.write=true}
 * rewrites the copies (and appends a block for a command the doc has none for).
 */
class CliDocTest {
  static final Path DOC = Path.of("..", "docs", "cli.md");
  static final String REGENERATE =
      "mvn -B -ntp -q -pl app -am verify -Dtest=CliDocTest -Dsurefire.failIfNoSpecifiedTests=false"
          + " -Dcli.doc.write=true";
  private static final Pattern BLOCK =
      Pattern.compile(
          "<!-- help: rhumbatron([a-z -]*) -->\n```text\n(.*?)```\n<!-- end help -->",
          Pattern.DOTALL);
  private static final String APPENDIX = "## Every command's help";

  @Test
  void everyCommandsHelpInTheDocIsWhatTheCommandPrints() throws IOException {
    Map<String, String> helps = helps();
    String doc = Files.readString(DOC, StandardCharsets.UTF_8);
    String fresh = regenerated(doc, helps);
    if (Boolean.getBoolean("cli.doc.write")) {
      Files.writeString(DOC, fresh, StandardCharsets.UTF_8);
      doc = fresh;
    }
    List<String> stale = new ArrayList<>();
    Map<String, String> inDoc = blocks(doc);
    for (Map.Entry<String, String> e : helps.entrySet()) {
      if (!e.getValue().equals(inDoc.get(e.getKey()))) {
        stale.add("rhumbatron" + e.getKey());
      }
    }
    for (String command : inDoc.keySet()) {
      if (!helps.containsKey(command)) {
        stale.add("rhumbatron" + command + " (no such command)");
      }
    }
    assertThat(stale)
        .as("docs/cli.md shows an old --help of these commands; regenerate it with: " + REGENERATE)
        .isEmpty();
  }

  /** Each command path (" changes create") and its help text, in the command tree's order. */
  static Map<String, String> helps() {
    Map<String, String> out = new LinkedHashMap<>();
    for (List<String> path : CliUsageTest.commandPaths()) {
      List<String> args = new ArrayList<>(path);
      args.add("--help");
      String help = CliUsageTest.cli(args.toArray(String[]::new)).out();
      // Trailing blanks are the help layout's padding, which a doc's editor may strip.
      String text = help.replaceAll("[ \t]+\n", "\n");
      out.put(
          path.isEmpty() ? "" : " " + String.join(" ", path),
          text.endsWith("\n") ? text : text + "\n");
    }
    return out;
  }

  private static Map<String, String> blocks(String doc) {
    Map<String, String> out = new LinkedHashMap<>();
    Matcher m = BLOCK.matcher(doc);
    while (m.find()) {
      out.put(m.group(1), m.group(2));
    }
    return out;
  }

  /** The doc with every block replaced by the current help, missing ones appended. */
  static String regenerated(String doc, Map<String, String> helps) {
    Matcher m = BLOCK.matcher(doc);
    StringBuilder out = new StringBuilder();
    List<String> present = new ArrayList<>();
    while (m.find()) {
      String help = helps.get(m.group(1));
      present.add(m.group(1));
      m.appendReplacement(
          out, Matcher.quoteReplacement(help == null ? "" : block(m.group(1), help)));
    }
    m.appendTail(out);
    StringBuilder missing = new StringBuilder();
    for (Map.Entry<String, String> e : helps.entrySet()) {
      if (!present.contains(e.getKey())) {
        missing.append("\n### rhumbatron").append(e.getKey()).append("\n\n");
        missing.append(block(e.getKey(), e.getValue())).append('\n');
      }
    }
    if (missing.length() > 0) {
      if (out.indexOf(APPENDIX) < 0) {
        out.append('\n').append(APPENDIX).append('\n');
      }
      out.append(missing);
    }
    return out.toString();
  }

  private static String block(String command, String help) {
    return "<!-- help: rhumbatron"
        + command
        + " -->\n```text\n"
        + help
        + (help.endsWith("\n") ? "" : "\n")
        + "```\n<!-- end help -->";
  }
}
