/**
 * The indexer (the seed's {@code indexer} consumer of the indexing queue): {@link
 * org.rhumbatron.indexer.IndexConsumer} records each project's index per canonical generation in
 * {@code project_indexes} and runs an {@link org.rhumbatron.indexer.IndexBuilder} on it; core ships
 * the simulated builder.
 */
package org.rhumbatron.indexer;
