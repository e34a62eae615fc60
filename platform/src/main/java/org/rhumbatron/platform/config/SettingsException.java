package org.rhumbatron.platform.config;

import org.rhumbatron.protocol.RhumbatronException;

/** A setting that does not parse or is out of range; the message names the key. */
public final class SettingsException extends RhumbatronException {
  private final String key;

  public SettingsException(String key, String problem) {
    super("setting " + key + ": " + problem);
    this.key = key;
  }

  private SettingsException(String key, String message, boolean whole) {
    super(message);
    this.key = key;
  }

  /** An environment variable {@code RHUMBATRON_...} that names no setting. */
  static SettingsException unknownVariable(String name, String nearest) {
    return new SettingsException(
        name,
        "environment variable "
            + name
            + " names no setting"
            + (nearest == null ? "" : "; did you mean " + nearest + "?")
            + " (a setting's variable is RHUMBATRON_ and its key in upper case, . and - as _)",
        true);
  }

  /** The settings file ({@code --config}) is missing or unreadable. */
  static SettingsException unreadableFile(java.nio.file.Path file, java.io.IOException e) {
    String why =
        e instanceof java.nio.file.NoSuchFileException
            ? "no such file"
            : e instanceof java.nio.file.AccessDeniedException
                ? "not readable"
                : "cannot read it: " + e.getMessage();
    return new SettingsException("file", "settings file " + file + ": " + why, true);
  }

  public String key() {
    return key;
  }
}
