package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The tracked text files (docs, help texts, comments, log lines) speak of the software to its
 * users: no issue numbers, nothing of how the work was organised, no pointer outside the
 * repository. Each hit is named by file and line.
 */
class ForbiddenWordsTest {
  static final Path ROOT = Path.of("..");

  // Words of a builder's notebook, not of a manual; "the issue" covers "the issue's".
  private static final List<Pattern> FORBIDDEN =
      List.of(
          Pattern.compile("\\bissues? #?\\d+", Pattern.CASE_INSENSITIVE),
          Pattern.compile("\\bthe issue\\b", Pattern.CASE_INSENSITIVE),
          Pattern.compile("\\bthis stop\\b", Pattern.CASE_INSENSITIVE),
          Pattern.compile("\\bhelpers?\\b", Pattern.CASE_INSENSITIVE),
          Pattern.compile("\\bworktrees?\\b", Pattern.CASE_INSENSITIVE),
          Pattern.compile("\\bmy\\b", Pattern.CASE_INSENSITIVE),
          Pattern.compile("\\bper the rules\\b", Pattern.CASE_INSENSITIVE),
          Pattern.compile("\\bthis session\\b", Pattern.CASE_INSENSITIVE),
          Pattern.compile("\\.\\./shared"),
          Pattern.compile("\\bDESIGN\\.md"));

  // Flyway checksums every applied migration: editing a shipped one's comment would stop core on
  // every database that ran it. This file holds the word list itself.
  private static final Pattern EXCLUDED =
      Pattern.compile(
          "(.*/db/(postgres|sqlite)/V\\d+__.*\\.sql|.*/ForbiddenWordsTest\\.java|.*\\.(png|svg|jar|gz))");

  @Test
  void noTrackedTextFileSpeaksOfIssuesOrOfHowItWasBuilt() throws Exception {
    List<String> hits = new ArrayList<>();
    for (String file : trackedFiles()) {
      if (EXCLUDED.matcher(file).matches()) {
        continue;
      }
      Path path = ROOT.resolve(file);
      if (!Files.isRegularFile(path)) {
        continue; // deleted in the work tree, not yet in the index
      }
      byte[] bytes = Files.readAllBytes(path);
      if (isBinary(bytes)) {
        continue;
      }
      String[] lines = new String(bytes, StandardCharsets.UTF_8).split("\n", -1);
      for (int i = 0; i < lines.length; i++) {
        for (Pattern p : FORBIDDEN) {
          var m = p.matcher(lines[i]);
          if (m.find()) {
            hits.add(file + ":" + (i + 1) + ": \"" + m.group() + "\" in: " + lines[i].strip());
          }
        }
      }
    }
    assertThat(hits)
        .as("words of how the project was built, not of the software (file:line)")
        .isEmpty();
  }

  /**
   * The repository's tracked files, as git lists them; outside a git checkout (a source archive)
   * every file but build output and data.
   */
  static List<String> trackedFiles() throws IOException, InterruptedException {
    Process git;
    try {
      git =
          new ProcessBuilder("git", "ls-files", "-z")
              .directory(ROOT.toFile())
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
    } catch (IOException noGit) {
      return walked();
    }
    String out = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (git.waitFor() != 0) {
      return walked();
    }
    List<String> files = new ArrayList<>();
    for (String f : out.split("\0")) {
      if (!f.isEmpty()) {
        files.add(f);
      }
    }
    return files;
  }

  private static List<String> walked() throws IOException {
    Path root = ROOT.toAbsolutePath().normalize();
    try (var paths = Files.walk(root)) {
      return paths
          .filter(Files::isRegularFile)
          .map(p -> root.relativize(p).toString())
          .filter(f -> !f.matches("(.*/)?(target|data|\\.git)/.*"))
          .sorted()
          .toList();
    }
  }

  private static boolean isBinary(byte[] bytes) {
    for (int i = 0; i < Math.min(bytes.length, 8000); i++) {
      if (bytes[i] == 0) {
        return true;
      }
    }
    return false;
  }
}
