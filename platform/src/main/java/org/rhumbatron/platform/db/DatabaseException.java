package org.rhumbatron.platform.db;

/** A database operation failed; the message names the URL, file or SQL state involved. */
public class DatabaseException extends RuntimeException {

  public DatabaseException(String message) {
    super(message);
  }

  public DatabaseException(String message, Throwable cause) {
    super(message, cause);
  }
}
