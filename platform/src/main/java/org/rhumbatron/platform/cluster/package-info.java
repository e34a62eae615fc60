/**
 * Who does the single-writer duties when several cores share one PostgreSQL database: nodes with
 * heartbeat rows, a lease with an epoch per {@link org.rhumbatron.platform.cluster.Duty},
 * assignment by rendezvous hashing over the live nodes, and the fence ({@link
 * org.rhumbatron.platform.cluster.DutyOwnership#fence}) that a duty's write transactions call so a
 * node that lost the duty cannot commit. SQLite is one node: {@link
 * org.rhumbatron.platform.cluster.OwnsEverything}.
 */
package org.rhumbatron.platform.cluster;
