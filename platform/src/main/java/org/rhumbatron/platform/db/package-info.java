/**
 * The database layer: one {@link org.rhumbatron.platform.db.Database} facade over SQLite (the
 * default, one file) or PostgreSQL (a {@code jdbc:postgresql://} URL), a small {@link
 * org.rhumbatron.platform.db.Dialect} for what really differs between the two, and versioned {@link
 * org.rhumbatron.platform.db.Migrations} applied at open.
 *
 * <p>Every table of core lives here, so an actor's state change and its outbox row are one real
 * transaction. Times are BIGINT epoch milliseconds in both dialects.
 *
 * <p>SQLite: WAL, {@code synchronous=NORMAL}, {@code busy_timeout}, foreign keys on; one writer
 * connection behind a lock (SQLite writes are serial anyway) with {@code BEGIN IMMEDIATE}, and a
 * small pool of read-only connections. PostgreSQL: a HikariCP pool. Transient errors ({@code
 * SQLITE_BUSY}/{@code SQLITE_LOCKED}, PostgreSQL 40001/40P01) are retried with backoff inside the
 * layer and never reach a caller as such.
 */
package org.rhumbatron.platform.db;
