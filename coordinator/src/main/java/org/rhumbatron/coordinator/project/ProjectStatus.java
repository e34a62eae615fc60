package org.rhumbatron.coordinator.project;

import java.util.Locale;

/** {@code projects.status}: active, then archived or deleted. */
public enum ProjectStatus {
  ACTIVE,
  ARCHIVED,
  DELETED;

  /** The value stored in {@code projects.status}. */
  public String column() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Whether {@code stored} (a {@code projects.status} value) is this status. */
  public boolean is(String stored) {
    return column().equals(stored);
  }
}
