package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Each lifecycle table has one owner: only {@code lifecycle/} runs SQL on it, the other modules go
 * through its read API. ArchUnit sees classes, not the SQL in their strings, so this reads the main
 * sources of the modules above the lifecycle as text.
 */
class LifecycleTablesTest {
  /**
   * The modules whose main sources may not name a lifecycle table in SQL. The checker is left out
   * on purpose: an auditor reads the tables itself rather than trust the code it checks.
   */
  static final List<String> MODULES =
      List.of(
          "router",
          "integration",
          "agents",
          "indexer",
          "api",
          "server",
          "workload",
          "bench",
          "cli");

  /**
   * A SQL keyword that reads or writes a table, then a lifecycle table; the two may be split over a
   * string concatenation ({@code " FROM" + " changes"}).
   */
  static final Pattern LIFECYCLE_SQL =
      Pattern.compile(
          "\\b(FROM|JOIN|UPDATE|INTO)\\b[\\s\"+]*"
              + "(changes|tasks|candidates|releases|promotions|changesets|workflow_[a-z_]+)\\b");

  @Test
  void noModuleAboveTheLifecycleRunsSqlOnItsTables() {
    List<String> found = new ArrayList<>();
    for (String module : MODULES) {
      Path sources = root().resolve(module).resolve("src/main/java");
      assertThat(sources).isDirectory();
      found.addAll(lifecycleSql(sources));
    }
    assertThat(found).as("SQL on lifecycle tables outside lifecycle/").isEmpty();
  }

  @Test
  void thePatternFindsSqlOnLifecycleTablesAndNothingElse() {
    assertThat(LIFECYCLE_SQL.matcher("\"SELECT change_id FROM changes c WHERE\"").find()).isTrue();
    assertThat(LIFECYCLE_SQL.matcher("\"UPDATE tasks SET state = ?\"").find()).isTrue();
    assertThat(LIFECYCLE_SQL.matcher("\" JOIN\"\n + \"candidates c ON\"").find()).isTrue();
    assertThat(LIFECYCLE_SQL.matcher("\"INSERT INTO workflow_steps (\"").find()).isTrue();
    assertThat(LIFECYCLE_SQL.matcher("\"SELECT 1 FROM dead_letters\"").find()).isFalse();
    assertThat(LIFECYCLE_SQL.matcher("\"SELECT 1 FROM tasks_view\"").find()).isFalse();
    assertThat(LIFECYCLE_SQL.matcher("// work from changes of a project").find()).isFalse();
  }

  /** {@code file:line: text} of each match under {@code sources}. */
  private static List<String> lifecycleSql(Path sources) {
    List<String> found = new ArrayList<>();
    try (Stream<Path> files = Files.walk(sources)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
        String text = Files.readString(file);
        Matcher m = LIFECYCLE_SQL.matcher(text);
        while (m.find()) {
          long line = text.substring(0, m.start()).chars().filter(c -> c == '\n').count() + 1;
          found.add(root().relativize(file) + ":" + line + ": " + m.group());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return found;
  }

  /** The project's root: the tests run in the module's folder. */
  private static Path root() {
    Path here = Path.of("").toAbsolutePath();
    return Files.isDirectory(here.resolve("lifecycle")) ? here : here.getParent();
  }
}
