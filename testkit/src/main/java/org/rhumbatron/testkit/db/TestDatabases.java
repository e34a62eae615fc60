package org.rhumbatron.testkit.db;

import org.junit.jupiter.api.Assumptions;

/**
 * Creates test databases directly, for a test that needs more than the one the {@link
 * DatabaseExtension} hands it. The caller closes what it creates.
 */
public final class TestDatabases {

  private TestDatabases() {}

  /** A fresh SQLite file in a new temporary directory. */
  public static TestDatabase sqlite() {
    return SqliteTestDatabase.create();
  }

  /**
   * A fresh PostgreSQL database. When the server is unreachable this aborts the calling test (JUnit
   * reports it skipped, with the reason), or fails it when {@link #postgresRequired()}.
   */
  public static TestDatabase postgres() {
    String reason = PostgresTestDatabase.unreachableReason();
    if (reason != null) {
      if (postgresRequired()) {
        throw new IllegalStateException(
            reason + " (required because CI=true or -Drhumbatron.requirePostgres=true)");
      }
      Assumptions.abort(
          reason + "; skipped (set CI=true or -Drhumbatron.requirePostgres=true to fail instead)");
    }
    return PostgresTestDatabase.create();
  }

  public static TestDatabase create(TestDatabase.Kind kind) {
    return switch (kind) {
      case SQLITE -> sqlite();
      case POSTGRES -> postgres();
    };
  }

  /** True when CI=true or -Drhumbatron.requirePostgres=true: a missing server fails the tests. */
  public static boolean postgresRequired() {
    return PostgresTestDatabase.required();
  }
}
