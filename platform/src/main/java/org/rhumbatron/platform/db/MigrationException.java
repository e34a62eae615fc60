package org.rhumbatron.platform.db;

/** A migration could not be loaded, validated or applied; {@link #file()} names its file. */
public final class MigrationException extends DatabaseException {

  private final String file;

  public MigrationException(String file, String message) {
    super(file + ": " + message);
    this.file = file;
  }

  public MigrationException(String file, String message, Throwable cause) {
    super(file + ": " + message, cause);
    this.file = file;
  }

  /** The migration's file name, for example {@code V2__outbox_retention.sql}. */
  public String file() {
    return file;
  }
}
