package org.rhumbatron.testkit.nats;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** What a test server needs of the machine: the {@code nats-server} binary and free ports. */
final class NatsHost {
  static final String BINARY_NAME = "nats-server";

  private NatsHost() {}

  /** {@code nats-server} in one of the directories of {@code pathVariable}, else a fallback. */
  static Path findBinary(String pathVariable, Path... fallbacks) {
    List<Path> candidates = new ArrayList<>();
    if (pathVariable != null) {
      for (String dir : pathVariable.split(File.pathSeparator)) {
        if (!dir.isBlank()) {
          candidates.add(Path.of(dir, BINARY_NAME));
        }
      }
    }
    candidates.addAll(List.of(fallbacks));
    for (Path candidate : candidates) {
      if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    throw new IllegalStateException(
        "nats-server not found on the PATH or in /usr/sbin: install the Debian package"
            + " 'nats-server' (apt-get install nats-server)");
  }

  /** A TCP port that was free on 127.0.0.1 a moment ago; never {@code sharedPort}. */
  static int freePort(int sharedPort) {
    for (int i = 0; i < 100; i++) {
      try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        int candidate = socket.getLocalPort();
        if (candidate != sharedPort) {
          return candidate;
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot find a free port", e);
      }
    }
    throw new IllegalStateException("no free port found on 127.0.0.1");
  }
}
