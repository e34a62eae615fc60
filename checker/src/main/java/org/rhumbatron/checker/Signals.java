package org.rhumbatron.checker;

import java.util.concurrent.TimeUnit;

/** {@code kill -SIG pid}: the signals a check sends that Java's Process API has no call for. */
final class Signals {
  private Signals() {}

  static void send(long pid, String signal, String what) throws Exception {
    if (pid <= 0) {
      throw new IllegalStateException(what + " has no pid to send SIG" + signal + " to");
    }
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      throw new IllegalStateException("kill -" + signal + " " + pid + " (" + what + ") failed");
    }
  }
}
