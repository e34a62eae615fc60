/**
 * Fresh databases for tests: a SQLite file in a temporary directory, or a uniquely named PostgreSQL
 * database on {@code 127.0.0.1:5432} (user {@code postgres}, trust auth) that is dropped
 * afterwards.
 *
 * <p>Style (db-scheduler's {@code CompatibilityTest}): write one abstract contract class and one
 * small subclass per database. The subclass registers the extension; the contract only asks for a
 * {@link org.rhumbatron.testkit.db.TestDatabase}.
 *
 * <pre>{@code
 * abstract class OutboxContract {
 *   abstract TestDatabase db();
 *   @Test void appendsOnce() { ... Database.open(db().url()) ... }
 * }
 *
 * class SqliteOutboxTest extends OutboxContract {
 *   @RegisterExtension final DatabaseExtension db = DatabaseExtension.sqlite();
 *   TestDatabase db() { return db.database(); }
 * }
 *
 * class PostgresOutboxTest extends OutboxContract {
 *   @RegisterExtension final DatabaseExtension db = DatabaseExtension.postgres();
 *   TestDatabase db() { return db.database(); }
 * }
 * }</pre>
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
