package org.rhumbatron.cli;

/** A failure of the CLI with its exit code; the message is the one line printed on stderr. */
public final class CliException extends RuntimeException {
  public static final int API_REFUSED = 1;
  public static final int USAGE = 2;
  public static final int UNREACHABLE = 3;
  public static final int SERVER_FAILED = 4;

  private final int exitCode;

  CliException(int exitCode, String message) {
    super(message);
    this.exitCode = exitCode;
  }

  public int exitCode() {
    return exitCode;
  }
}
