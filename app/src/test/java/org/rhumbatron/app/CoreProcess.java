package org.rhumbatron.app;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Runs {@code rhumbatron} as a child process on the test classpath, for the tests of core. */
final class CoreProcess {
  private CoreProcess() {}

  /** {@code java -cp <test classpath> org.rhumbatron.app.Main args...}, stderr into stdout. */
  static Process launch(String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(Main.class.getName());
    command.addAll(List.of(args));
    return new ProcessBuilder(command).redirectErrorStream(true).start();
  }

  /** A daemon thread that adds each line the process prints to {@code into}, until it ends. */
  static Thread pump(Process process, List<String> into) {
    Thread t =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                  into.add(line);
                }
              } catch (IOException ignored) {
                // the process ended
              }
            });
    t.setDaemon(true);
    t.start();
    return t;
  }
}
