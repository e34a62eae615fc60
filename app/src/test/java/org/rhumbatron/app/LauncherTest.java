package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/rhumbatron on a copy of the project's layout, with mvn, java and bin/setup stand-ins that
 * record their calls: it runs setup only when a tool the command needs is missing, rebuilds only
 * when a module's src/main or a pom is newer than the jar, and a build says one line, or on failure
 * Maven's output without escape sequences.
 */
class LauncherTest {
  @TempDir Path tree;
  Path calls;
  Path jar;

  /** The repository root: the app module's parent. */
  static Path repoRoot() {
    Path here = Path.of("").toAbsolutePath();
    return Files.exists(here.resolve("bin/rhumbatron")) ? here : here.getParent();
  }

  record Run(int code, String err) {}

  @BeforeEach
  void layout() throws Exception {
    calls = tree.resolve("calls");
    Files.createDirectories(tree.resolve("bin"));
    Files.copy(repoRoot().resolve("bin/rhumbatron"), tree.resolve("bin/rhumbatron"));
    script(tree.resolve("bin/setup"), "echo \"setup $*\" >> \"" + calls + "\"");
    Files.writeString(
        tree.resolve("pom.xml"), "<modules>\n  <module>lib</module>\n  <module>app</module>\n");
    for (String module : List.of("lib", "app")) {
      Files.createDirectories(tree.resolve(module + "/src/main/java"));
      Files.writeString(tree.resolve(module + "/pom.xml"), "<project/>");
      Files.writeString(tree.resolve(module + "/src/main/java/A.java"), "class A {}");
    }
    Files.createDirectories(tree.resolve("app/target"));
    jar = tree.resolve("app/target/rhumbatron.jar");
    Files.writeString(jar, "jar");
    Path tools = Files.createDirectories(tree.resolve("tools"));
    // Maven 3.8 writes ESC[0m even with -B; the stand-in does too.
    script(
        tools.resolve("mvn"),
        "echo \"mvn $*\" >> \""
            + calls
            + "\"\nprintf '\\033[0m\\033[1mBUILD\\033[0m\\n'\n"
            + "[ -f \""
            + tree.resolve("fail")
            + "\" ] && exit 1\n"
            // Like the shade plugin: note whether an old jar was still there, then write the new.
            + "[ -f \""
            + jar
            + "\" ] && echo 'old jar present' >> \""
            + calls
            + "\"\necho built > \""
            + jar
            + "\"\nexit 0");
    script(tools.resolve("java"), "echo \"java $*\" >> \"" + calls + "\"");
    age(tree, Instant.now().minusSeconds(3600));
    Files.setLastModifiedTime(jar, FileTime.from(Instant.now().minusSeconds(60)));
  }

  private static void script(Path file, String body) throws Exception {
    Files.writeString(file, "#!/usr/bin/env bash\n" + body + "\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  private static void age(Path dir, Instant at) throws Exception {
    try (var files = Files.walk(dir)) {
      for (Path p : files.toList()) {
        Files.setLastModifiedTime(p, FileTime.from(at));
      }
    }
  }

  private Run launch() throws Exception {
    ProcessBuilder pb = new ProcessBuilder(tree.resolve("bin/rhumbatron").toString(), "streams");
    pb.environment().put("PATH", tree.resolve("tools") + ":/usr/bin:/bin");
    pb.redirectOutput(ProcessBuilder.Redirect.DISCARD);
    Process p = pb.start();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return new Run(p.exitValue(), err);
  }

  private List<String> mavenCalls() throws Exception {
    if (!Files.exists(calls)) {
      return List.of();
    }
    return Files.readAllLines(calls).stream().filter(l -> l.startsWith("mvn")).toList();
  }

  private void touchNow(String relative) throws Exception {
    Path file = tree.resolve(relative);
    Files.createDirectories(file.getParent());
    Files.writeString(file, "[]");
    Files.setLastModifiedTime(file, FileTime.from(Instant.now()));
  }

  @Test
  void aNewerFileOutsideTheSourcesDoesNotRebuild() throws Exception {
    touchNow("tasks.json");
    touchNow("data/state.json");
    touchNow("docs/notes.md");
    touchNow("app/src/test/java/ATest.java"); // not in the jar
    Run r = launch();
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(mavenCalls()).isEmpty();
    assertThat(r.err()).isEmpty();
    assertThat(Files.readString(calls)).contains("java -jar " + jar + " streams");
  }

  @Test
  void aClientCommandWithJavaAndMavenThereRunsNoSetup() throws Exception {
    Run r = launch();
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(Files.readString(calls)).doesNotContain("setup");
  }

  @Test
  void aChangedSourceOrPomRebuildsOnceInOneLine() throws Exception {
    touchNow("lib/src/main/resources/openapi.json");
    Run r = launch();
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(mavenCalls()).hasSize(1);
    assertThat(r.err())
        .isEqualTo("rhumbatron: building the jar (lib/src/main/resources/openapi.json changed)\n");
    assertThat(launch().err()).isEmpty();
    assertThat(mavenCalls()).hasSize(1);

    touchNow("app/pom.xml");
    assertThat(launch().err()).contains("app/pom.xml changed");
    assertThat(mavenCalls()).hasSize(2);
  }

  @Test
  void aRebuildRemovesTheOldShadedJarBeforeMavenRuns() throws Exception {
    touchNow("lib/src/main/java/A.java");
    Run r = launch();
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(mavenCalls()).hasSize(1);
    assertThat(Files.readString(calls)).doesNotContain("old jar present");
    assertThat(Files.readString(jar)).isEqualTo("built\n");
  }

  @Test
  void aFailedBuildShowsMavensOutputWithoutEscapes() throws Exception {
    touchNow("app/src/main/java/B.java");
    Files.writeString(tree.resolve("fail"), "");
    Run r = launch();
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err()).contains("BUILD", "the build failed").doesNotContain("\u001b");
  }
}
