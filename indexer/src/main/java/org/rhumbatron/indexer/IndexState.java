package org.rhumbatron.indexer;

import java.util.Locale;

/** The state of a Project's index at a generation, as {@code project_indexes.state} stores it. */
public enum IndexState {
  /** The indexer started a build; the queue retries it until it is ready or given up. */
  BUILDING,
  READY,
  /** The queue gave up on the build; a ready index is never marked failed. */
  FAILED;

  /** The value stored in {@code project_indexes.state} (lower case). */
  public String dbName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
