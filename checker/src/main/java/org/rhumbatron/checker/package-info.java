/**
 * {@code rhumbatron check}: the demo's workload against core processes and a nats-server it starts
 * itself, a seeded schedule of faults, then a reading of the database, the streams and the archive
 * that counts what the seed promises never happens (an Event lost or applied twice, a Command's
 * effect twice, a Change that never ends, poison that is neither dead-lettered nor rejected).
 */
package org.rhumbatron.checker;
