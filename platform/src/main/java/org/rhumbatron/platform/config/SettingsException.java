package org.rhumbatron.platform.config;

import org.rhumbatron.protocol.RhumbatronException;

/** A setting that does not parse or is out of range; the message names the key. */
public final class SettingsException extends RhumbatronException {
  private final String key;

  public SettingsException(String key, String problem) {
    super("setting " + key + ": " + problem);
    this.key = key;
  }

  public String key() {
    return key;
  }
}
