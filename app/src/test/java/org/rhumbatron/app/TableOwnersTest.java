package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Each table has one owner, the module that writes it, as {@code docs/tables.md} lists them; and
 * the lifecycle's tables are not even read in SQL above the lifecycle, whose read API the other
 * modules use. ArchUnit sees classes, not the SQL in their strings, so this reads the main sources
 * as text.
 */
class TableOwnersTest {
  /**
   * The modules whose main sources may not name a lifecycle table in SQL. The checker is left out
   * on purpose: an auditor reads the tables itself rather than trust the code it checks.
   */
  static final List<String> ABOVE_THE_LIFECYCLE =
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

  /** A SQL statement that writes a table, and the table, split as in {@link #LIFECYCLE_SQL}. */
  static final Pattern WRITE_SQL =
      Pattern.compile("\\b(INSERT INTO|UPDATE|DELETE FROM)\\b[\\s\"+]*([a-z][a-z0-9_]*)\\b");

  /** A row of the list: {@code | `table` | owner | Class, Class |}. */
  static final Pattern OWNER_ROW =
      Pattern.compile("^\\| `([a-z0-9_]+)` \\| ([a-z]+) \\| ([A-Za-z, ]+) \\|$", Pattern.MULTILINE);

  private static Map<String, Owner> owners;

  /** The module that writes a table, and its classes that do. */
  record Owner(String module, Set<String> classes) {}

  @BeforeAll
  static void readTheList() throws IOException {
    owners = owners(Files.readString(root().resolve("docs/tables.md")));
  }

  @Test
  void theListNamesEveryTableTheMigrationsCreate() throws IOException {
    Set<String> created = new TreeSet<>();
    Set<String> dropped = new TreeSet<>();
    try (Stream<Path> files =
        Files.list(root().resolve("platform/src/main/resources/db/postgres"))) {
      for (Path file : files.toList()) {
        String ddl = Files.readString(file);
        collect(ddl, "CREATE TABLE (?:IF NOT EXISTS )?([a-z0-9_]+)", created::add);
        collect(ddl, "DROP TABLE (?:IF EXISTS )?([a-z0-9_]+)", dropped::add);
      }
    }
    created.removeAll(dropped);
    assertThat(owners.keySet()).containsExactlyInAnyOrderElementsOf(created);
  }

  @Test
  void eachTableIsWrittenOnlyByItsOwnersListedClasses() {
    Map<String, Set<String>> writers = new TreeMap<>(); // table -> classes that write it
    List<String> wrong = new ArrayList<>();
    for (Source source : mainSources()) {
      Matcher m = WRITE_SQL.matcher(source.text());
      while (m.find()) {
        Owner owner = owners.get(m.group(2));
        if (owner == null) {
          continue; // a word after UPDATE in prose, or a table name held in a variable
        }
        writers.computeIfAbsent(m.group(2), t -> new TreeSet<>()).add(source.className());
        if (!owner.module().equals(source.module())
            || !owner.classes().contains(source.className())) {
          wrong.add(
              source.writer()
                  + ":"
                  + source.line(m.start())
                  + " writes "
                  + m.group(2)
                  + ", which only "
                  + owner.module()
                  + "/"
                  + owner.classes()
                  + " may write");
        }
      }
    }
    owners.forEach(
        (table, owner) -> {
          Set<String> idle = new TreeSet<>(owner.classes());
          idle.removeAll(writers.getOrDefault(table, Set.of()));
          if (!idle.isEmpty()) {
            wrong.add(owner.module() + "/" + idle + " listed for " + table + " but write none");
          }
        });
    assertThat(wrong).as("writes against docs/tables.md").isEmpty();
  }

  @Test
  void noModuleAboveTheLifecycleRunsSqlOnItsTables() {
    List<String> found = new ArrayList<>();
    for (Source source : mainSources()) {
      if (ABOVE_THE_LIFECYCLE.contains(source.module())) {
        Matcher m = LIFECYCLE_SQL.matcher(source.text());
        while (m.find()) {
          found.add(source.writer() + ":" + source.line(m.start()) + ": " + m.group());
        }
      }
    }
    assertThat(found).as("SQL on lifecycle tables outside lifecycle/").isEmpty();
  }

  @Test
  void thePatternsFindSqlOnTablesAndNothingElse() {
    assertThat(LIFECYCLE_SQL.matcher("\"SELECT change_id FROM changes c WHERE\"").find()).isTrue();
    assertThat(LIFECYCLE_SQL.matcher("\"UPDATE tasks SET state = ?\"").find()).isTrue();
    assertThat(LIFECYCLE_SQL.matcher("\" JOIN\"\n + \"candidates c ON\"").find()).isTrue();
    assertThat(LIFECYCLE_SQL.matcher("\"INSERT INTO workflow_steps (\"").find()).isTrue();
    assertThat(LIFECYCLE_SQL.matcher("\"SELECT 1 FROM dead_letters\"").find()).isFalse();
    assertThat(LIFECYCLE_SQL.matcher("\"SELECT 1 FROM tasks_view\"").find()).isFalse();
    assertThat(LIFECYCLE_SQL.matcher("// work from changes of a project").find()).isFalse();
    Matcher write = WRITE_SQL.matcher("\"UPDATE\"\n + \" projects SET status = ?\"");
    assertThat(write.find()).isTrue();
    assertThat(write.group(2)).isEqualTo("projects");
    assertThat(WRITE_SQL.matcher("\"SELECT 1 FROM projects\"").find()).isFalse();
    assertThat(
            owners("| `tasks` | lifecycle | TaskLedger |\n| `projects` | coordinator | A, B |\n"))
        .containsEntry("tasks", new Owner("lifecycle", Set.of("TaskLedger")))
        .containsEntry("projects", new Owner("coordinator", Set.of("A", "B")));
  }

  /** table → owner, from the rows of {@code markdown}'s table; a table listed twice fails. */
  static Map<String, Owner> owners(String markdown) {
    Map<String, Owner> owners = new TreeMap<>();
    Matcher m = OWNER_ROW.matcher(markdown);
    while (m.find()) {
      Set<String> classes = new TreeSet<>(List.of(m.group(3).trim().split(",\\s*")));
      Owner before = owners.put(m.group(1), new Owner(m.group(2), classes));
      assertThat(before).as("table %s listed twice", m.group(1)).isNull();
    }
    return owners;
  }

  /** One main source file of a module. */
  record Source(String module, String className, String text) {
    String writer() {
      return module + "/" + className;
    }

    long line(int offset) {
      return text.substring(0, offset).chars().filter(c -> c == '\n').count() + 1;
    }
  }

  /** The main Java sources of every module. */
  private static List<Source> mainSources() {
    List<Source> sources = new ArrayList<>();
    try (Stream<Path> modules = Files.list(root())) {
      for (Path module : modules.sorted().toList()) {
        Path main = module.resolve("src/main/java");
        if (!Files.isDirectory(main)) {
          continue;
        }
        try (Stream<Path> files = Files.walk(main)) {
          for (Path f : files.filter(f -> f.toString().endsWith(".java")).toList()) {
            String name = f.getFileName().toString();
            sources.add(
                new Source(
                    module.getFileName().toString(),
                    name.substring(0, name.length() - ".java".length()),
                    Files.readString(f)));
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    assertThat(sources).as("main sources").hasSizeGreaterThan(300);
    return sources;
  }

  private static void collect(String text, String regex, Consumer<String> into) {
    Matcher m = Pattern.compile(regex, Pattern.CASE_INSENSITIVE).matcher(text);
    while (m.find()) {
      into.accept(m.group(1).toLowerCase(java.util.Locale.ROOT));
    }
  }

  /** The project's root: the tests run in the module's folder. */
  private static Path root() {
    Path here = Path.of("").toAbsolutePath();
    return Files.isDirectory(here.resolve("lifecycle")) ? here : here.getParent();
  }
}
