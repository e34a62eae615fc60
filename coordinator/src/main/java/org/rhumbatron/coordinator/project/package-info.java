/**
 * A Project's root actor and the {@code projects} row it owns: creation, the canonical generation
 * and promotions on the root's lane, and the flags whose Events a ResourceShard writes ({@link
 * org.rhumbatron.coordinator.project.ProjectFlags}), in that shard's transaction.
 */
package org.rhumbatron.coordinator.project;
