package org.rhumbatron.coordinator.project;

import java.util.Locale;

/** {@code projects.status}: active, then archived or deleted. */
public enum ProjectStatus {
  ACTIVE,
  ARCHIVED,
  DELETED;

  /** The value stored in {@code projects.status}. */
  public String dbName() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static ProjectStatus fromDb(String value) {
    for (ProjectStatus s : values()) {
      if (s.dbName().equals(value)) {
        return s;
      }
    }
    throw new IllegalArgumentException("unknown project status '" + value + "'");
  }
}
