/**
 * Fresh databases for tests: a SQLite file in a temporary directory, or a uniquely named PostgreSQL
 * database on {@code 127.0.0.1:5432} (user {@code postgres}, trust auth) that is dropped
 * afterwards.
 *
 * <p>One class runs on both databases: annotate its test methods {@link
 * org.rhumbatron.testkit.db.DatabaseTest} instead of {@code @Test}. Each method runs once on SQLite
 * and once on PostgreSQL, each run with a fresh database set into the instance's {@link
 * org.rhumbatron.testkit.db.TestDatabase} fields before its {@code @BeforeEach} methods.
 *
 * <pre>{@code
 * class OutboxTest {
 *   TestDatabase db;
 *   @DatabaseTest void appendsOnce() { ... Database.open(db.url()) ... }
 * }
 * }</pre>
 *
 * <p>A test of one database registers a {@link org.rhumbatron.testkit.db.DatabaseExtension} itself.
 *
 * <p>An instance field gives every test method its own database; a {@code static} field gives the
 * class one database for all its methods. The extension also resolves test method parameters of
 * type {@link org.rhumbatron.testkit.db.TestDatabase}.
 *
 * <p>When PostgreSQL is unreachable the PostgreSQL tests are skipped with the reason, unless the
 * environment has {@code CI=true} or the system property {@code rhumbatron.requirePostgres=true} is
 * set: then they fail. Host and port can be changed with the system properties {@code
 * rhumbatron.postgresHost} and {@code rhumbatron.postgresPort}.
 */
package org.rhumbatron.testkit.db;
