package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code rhumbatron bench lifecycle} refuses what it cannot run in one line, exit code 2. */
class BenchRefusalTest {
  @TempDir Path data;

  @Test
  void severalNodesOnSqliteAreRefusedBeforeAnythingStarts() {
    for (String[] db : new String[][] {{}, {"--db", data.resolve("bench.db").toString()}}) {
      java.util.List<String> args =
          new java.util.ArrayList<>(
              List.of("bench", "lifecycle", "--nodes", "2", "--data", data.toString()));
      args.addAll(List.of(db));
      java.io.StringWriter err = new java.io.StringWriter();
      int code =
          Main.run(
              java.util.Map.of(),
              new java.io.PrintWriter(new java.io.StringWriter()),
              new java.io.PrintWriter(err),
              args.toArray(String[]::new));
      assertThat(code).as(err.toString()).isEqualTo(2);
      assertThat(err.toString()).contains("--nodes 2 needs a PostgreSQL --db");
    }
    assertThat(data.resolve("bench.db")).doesNotExist();
  }
}
