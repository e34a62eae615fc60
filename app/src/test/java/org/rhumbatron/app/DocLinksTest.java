package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every relative link of the tracked Markdown files reaches a file of the repository, and every
 * anchor ({@code #section}) a heading of its file, as GitHub names headings.
 */
class DocLinksTest {
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");

  @Test
  void everyRelativeLinkAndAnchorBetweenTheDocsResolves() throws Exception {
    List<String> broken = new ArrayList<>();
    for (String file : ForbiddenWordsTest.trackedFiles()) {
      if (!file.endsWith(".md") || !Files.isRegularFile(ForbiddenWordsTest.ROOT.resolve(file))) {
        continue;
      }
      Path md = ForbiddenWordsTest.ROOT.resolve(file);
      List<String> lines = proseLines(md);
      for (int i = 0; i < lines.size(); i++) {
        Matcher m = LINK.matcher(lines.get(i));
        while (m.find()) {
          String why = check(md, m.group(1));
          if (why != null) {
            broken.add(file + ":" + (i + 1) + ": " + m.group(1) + ": " + why);
          }
        }
      }
    }
    assertThat(broken).as("links that lead nowhere (file:line: link: why)").isEmpty();
  }

  @Test
  void everyManualACommentOrHelpNamesExists() throws Exception {
    // A manual named in a comment or help text is a link too, one no Markdown viewer checks.
    Pattern named = Pattern.compile("\\bdocs/[a-z0-9-]+\\.md");
    List<String> missing = new ArrayList<>();
    for (String file : ForbiddenWordsTest.trackedFiles()) {
      Path path = ForbiddenWordsTest.ROOT.resolve(file);
      // Tests name made-up files (a resource key path:docs/readme.md, a stand-in tree's docs).
      if (!file.matches(".*\\.(java|md|properties|xml|json|yml)")
          || file.contains("/src/test/")
          || !Files.isRegularFile(path)) {
        continue;
      }
      List<String> lines = Files.readAllLines(path, StandardCharsets.UTF_8);
      for (int i = 0; i < lines.size(); i++) {
        Matcher m = named.matcher(lines.get(i));
        while (m.find()) {
          if (!Files.exists(ForbiddenWordsTest.ROOT.resolve(m.group()))) {
            missing.add(file + ":" + (i + 1) + ": " + m.group());
          }
        }
      }
    }
    assertThat(missing).as("manuals named that do not exist (file:line: name)").isEmpty();
  }

  /** Why {@code target}, linked from {@code md}, leads nowhere; null when it resolves. */
  private static String check(Path md, String target) throws IOException {
    if (target.matches("^[a-z][a-z0-9+.-]*:.*")) {
      return null; // http:, https:, mailto:: outside the repository
    }
    int hash = target.indexOf('#');
    String file = hash < 0 ? target : target.substring(0, hash);
    String anchor = hash < 0 ? null : target.substring(hash + 1);
    Path to = file.isEmpty() ? md : md.getParent().resolve(file).normalize();
    if (!Files.exists(to)) {
      return "no such file";
    }
    if (anchor == null) {
      return null;
    }
    if (!to.toString().endsWith(".md")) {
      return "an anchor into a file that is not Markdown";
    }
    return anchors(to).contains(anchor)
        ? null
        : "no heading with this anchor in " + to.getFileName();
  }

  /** The anchors GitHub gives the headings of {@code md}: a slug, then -1, -2 for repeats. */
  static Set<String> anchors(Path md) throws IOException {
    Set<String> out = new HashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    for (String line : proseLines(md)) {
      Matcher h = HEADING.matcher(line);
      if (h.matches()) {
        String slug = slug(h.group(1));
        int n = seen.merge(slug, 1, Integer::sum) - 1;
        out.add(n == 0 ? slug : slug + "-" + n);
      }
    }
    return out;
  }

  static String slug(String heading) {
    String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1"); // a link's text only
    return text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
  }

  /** The file's lines with fenced code blocks blanked, so their brackets are not links. */
  private static List<String> proseLines(Path md) throws IOException {
    List<String> out = new ArrayList<>();
    boolean fenced = false;
    for (String line : Files.readAllLines(md, StandardCharsets.UTF_8)) {
      if (line.strip().startsWith("```")) {
        fenced = !fenced;
        out.add("");
        continue;
      }
      out.add(fenced ? "" : line);
    }
    return out;
  }
}
