package org.rhumbatron.testkit.nats;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

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

  // Below Linux's ephemeral range (32768-60999): the kernel never hands one of these to a client
  // socket or a bind of port 0, so a stopped server finds its port free when it starts again.
  // 26000 and up belong to rhumbatron check, which bin/test runs beside the other tests: a core it
  // restarts must not find its port taken by a test's server.
  private static final int LOWEST_PORT = 20_000;
  private static final int HIGHEST_PORT = 26_000;

  /** A TCP port that was free on 127.0.0.1 a moment ago; never {@code sharedPort}. */
  static int freePort(int sharedPort) {
    for (int i = 0; i < 200; i++) {
      int candidate = ThreadLocalRandom.current().nextInt(LOWEST_PORT, HIGHEST_PORT);
      if (candidate == sharedPort) {
        continue;
      }
      try (ServerSocket socket = new ServerSocket()) {
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), candidate), 1);
        return candidate;
      } catch (IOException taken) {
        // try another
      }
    }
    throw new IllegalStateException("no free port found on 127.0.0.1");
  }
}
