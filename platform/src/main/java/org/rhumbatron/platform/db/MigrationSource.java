package org.rhumbatron.platform.db;

import java.util.List;

/**
 * Finds the migrations of a dialect; see {@link Migrations#classpath} and {@link
 * Migrations#directory}.
 */
@FunctionalInterface
public interface MigrationSource {
  /** The dialect's migrations, in any order. */
  List<Migration> load(Dialect dialect);
}
