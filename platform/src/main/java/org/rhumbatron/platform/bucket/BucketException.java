package org.rhumbatron.platform.bucket;

import org.rhumbatron.protocol.RhumbatronException;

/** The bucket refused a key, or could not store, read, list or delete; the message names both. */
public class BucketException extends RhumbatronException {
  public BucketException(String message) {
    super(message);
  }

  public BucketException(String message, Throwable cause) {
    super(message, cause);
  }
}
