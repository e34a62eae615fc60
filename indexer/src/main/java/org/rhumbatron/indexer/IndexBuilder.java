package org.rhumbatron.indexer;

/**
 * What the indexer runs to build a project's index of one canonical generation. Core ships {@link
 * SimulatedIndexBuilder}; a real one reads the generation's artifact and writes the index.
 */
public interface IndexBuilder {

  /**
   * Builds the index, or throws; a throw is retried by the indexing queue. It may run again for the
   * same generation (a redelivery after a crash), so it must be idempotent.
   *
   * @param attempt 1 for the first build of this generation, counted in {@code project_indexes}
   */
  void build(String projectId, long generation, int attempt) throws Exception;
}
