package org.rhumbatron.protocol;

/**
 * Root of every error that Rhumbatron code throws on purpose.
 *
 * <p>Unchecked, so that callers catch it where they can act on it (a consumer nacks, the API
 * answers 400) and not at every call site. Subclasses carry the ids and fields in their message.
 */
public class RhumbatronException extends RuntimeException {

  public RhumbatronException(String message) {
    super(message);
  }

  public RhumbatronException(String message, Throwable cause) {
    super(message, cause);
  }
}
