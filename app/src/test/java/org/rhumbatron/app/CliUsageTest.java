package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The command line without a core: {@code --help} and {@code -V} on every command, a "did you mean"
 * for a mistyped one, and one line naming the option and its forms for a bad value.
 */
class CliUsageTest {
  @TempDir Path dir;

  record Run(int code, String out, String err) {}

  static Run cli(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.run(Map.of(), new PrintWriter(out), new PrintWriter(err), args);
    return new Run(code, out.toString(), err.toString());
  }

  /** Every command path of the tree, e.g. [changes, create], found from the annotations. */
  static List<List<String>> commandPaths() {
    List<List<String>> paths = new ArrayList<>();
    CommandLine root = new CommandLine(new Main());
    org.rhumbatron.cli.Cli.addTo(root, Map.of());
    collect(root, new ArrayList<>(), paths);
    return paths;
  }

  private static void collect(CommandLine c, List<String> path, List<List<String>> out) {
    out.add(List.copyOf(path));
    c.getSubcommands()
        .forEach(
            (name, sub) -> {
              if (name.equals(sub.getCommandName())) {
                List<String> next = new ArrayList<>(path);
                next.add(name);
                collect(sub, next, out);
              }
            });
  }

  @Test
  void everyCommandPrintsItsHelpAndTheVersion() {
    List<List<String>> paths = commandPaths();
    assertThat(paths).contains(List.of("changes", "create"), List.of("dead-letters", "list"));
    for (List<String> path : paths) {
      List<String> help = new ArrayList<>(path);
      help.add("--help");
      Run h = cli(help.toArray(String[]::new));
      assertThat(h.code()).as(help + ": " + h.err()).isZero();
      assertThat(h.out()).as(help.toString()).startsWith("Usage: rhumbatron");
      List<String> version = new ArrayList<>(path);
      version.add("-V");
      Run v = cli(version.toArray(String[]::new));
      assertThat(v.code()).as(version + ": " + v.err()).isZero();
      assertThat(v.out()).as(version.toString()).startsWith("rhumbatron 0.");
    }
  }

  @Test
  void aMistypedSubcommandOrOptionGetsTheNearestOne() {
    Run sub = cli("stream");
    assertThat(sub.code()).isEqualTo(2);
    assertThat(sub.err().lines()).hasSize(1);
    assertThat(sub.err()).as(sub.err()).contains("'stream'; did you mean streams? (see --help)");
    assertThat(cli("zzzzzz").err()).doesNotContain("did you mean");
    Run option = cli("changes", "list", "--projet", "p");
    assertThat(option.code()).isEqualTo(2);
    assertThat(option.err().lines()).hasSize(1);
    assertThat(option.err()).as(option.err()).contains("--projet", "did you mean", "--project");
  }

  @Test
  void aDurationWithoutUnitNamesTheOptionAndTheForms() {
    Run bare = cli("demo", "--duration", "180");
    assertThat(bare.code()).isEqualTo(2);
    assertThat(bare.err().lines()).hasSize(1);
    assertThat(bare.err())
        .startsWith("rhumbatron: --duration '180': no unit: write 180s for seconds")
        .doesNotContain("Exception");
    Run word = cli("check", "--duration", "3min");
    assertThat(word.code()).isEqualTo(2);
    assertThat(word.err().lines()).hasSize(1);
    assertThat(word.err())
        .startsWith("rhumbatron: --duration '3min': not a duration: a number and a unit")
        .doesNotContain("Exception");
  }

  @Test
  void aBadNatsUrlNamesTheOptionAndTheForm() {
    Run r = cli("core", "--nats", "nats:/127.0.0.1:4999", "--data", dir.toString(), "--http", "0");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err().lines()).hasSize(1);
    assertThat(r.err())
        .startsWith("rhumbatron: --nats 'nats:/127.0.0.1:4999': not a NATS URL")
        .contains("nats://HOST:PORT")
        .doesNotContain("Exception");
  }

  @Test
  void aBadEntryOfANatsListIsNamed() {
    Run r =
        cli(
            "core",
            "--nats",
            "nats://127.0.0.1:4999, nats:/127.0.0.1:5000",
            "--data",
            dir.toString(),
            "--http",
            "0");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err().lines()).hasSize(1);
    assertThat(r.err())
        .startsWith("rhumbatron: --nats 'nats:/127.0.0.1:5000': not a NATS URL")
        .doesNotContain("Exception");
    Run empty =
        cli("core", "--nats", "nats://127.0.0.1:4999,", "--data", dir.toString(), "--http", "0");
    assertThat(empty.code()).isEqualTo(2);
    assertThat(empty.err())
        .startsWith("rhumbatron: --nats entry 2 of 'nats://127.0.0.1:4999,' is empty");
  }

  @Test
  void moreThanOneCopyOnTheServerWithoutAClusterStopsStartInOneLine() throws Exception {
    Path config = dir.resolve("core.properties");
    java.nio.file.Files.writeString(config, "streams.replicas=3\n");
    Run r =
        cli(
            "core",
            "--config",
            config.toString(),
            "--data",
            dir.resolve("data").toString(),
            "--http",
            "0");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err().lines()).hasSize(1);
    assertThat(r.err())
        .startsWith("rhumbatron: setting streams.replicas: 3 copies asked, but nats-server")
        .contains("runs without a cluster")
        .doesNotContain("Exception");
  }

  @Test
  void aMissingTasksFileIsOneLineNamingTheOption() {
    Run missing =
        cli(
            "changes",
            "create",
            "--project",
            "p",
            "--request-id",
            "r",
            "--tasks-file",
            dir.resolve("none.json").toString(),
            "--url",
            "http://127.0.0.1:1");
    assertThat(missing.code()).as(missing.err()).isEqualTo(2);
    assertThat(missing.err().lines()).hasSize(1);
    assertThat(missing.err())
        .isEqualTo("rhumbatron: --tasks-file " + dir.resolve("none.json") + ": no such file\n")
        .doesNotContain("Exception");
    Run absent = cli("changes", "create", "--project", "p", "--request-id", "r");
    assertThat(absent.code()).as(absent.err()).isEqualTo(2);
    assertThat(absent.err()).contains("Missing required option", "--tasks-file");
  }
}
