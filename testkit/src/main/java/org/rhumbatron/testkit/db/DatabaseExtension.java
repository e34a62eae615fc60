package org.rhumbatron.testkit.db;

import java.util.Objects;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Hands a test a fresh database of one kind; register it with {@code @RegisterExtension}.
 *
 * <ul>
 *   <li>on an instance field: a new database for every test method, deleted after it;
 *   <li>on a {@code static} field: one database for the whole class, deleted after the class.
 * </ul>
 *
 * <p>Read the database with {@link #database()} or declare a {@link TestDatabase} test method
 * parameter. A PostgreSQL extension skips its tests when the server is unreachable, or fails them
 * under {@code CI=true} / {@code -Drhumbatron.requirePostgres=true}. See the package documentation
 * and {@link DatabaseTest} for one test class that runs on both databases.
 */
public final class DatabaseExtension
    implements BeforeAllCallback,
        AfterAllCallback,
        BeforeEachCallback,
        AfterEachCallback,
        ParameterResolver {

  private final TestDatabase.Kind kind;
  private boolean classScoped;
  private TestDatabase database;

  private DatabaseExtension(TestDatabase.Kind kind) {
    this.kind = Objects.requireNonNull(kind, "kind");
  }

  public static DatabaseExtension sqlite() {
    return new DatabaseExtension(TestDatabase.Kind.SQLITE);
  }

  public static DatabaseExtension postgres() {
    return new DatabaseExtension(TestDatabase.Kind.POSTGRES);
  }

  public static DatabaseExtension of(TestDatabase.Kind kind) {
    return new DatabaseExtension(kind);
  }

  public TestDatabase.Kind kind() {
    return kind;
  }

  /** The database of the running test; fails outside a test. */
  public TestDatabase database() {
    if (database == null) {
      throw new IllegalStateException(
          "no " + kind + " test database yet: read it inside a test or a @BeforeEach method");
    }
    return database;
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    // Only a static @RegisterExtension field gets beforeAll.
    classScoped = true;
    database = TestDatabases.create(kind);
  }

  @Override
  public void afterAll(ExtensionContext context) {
    closeDatabase();
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    if (!classScoped) {
      database = TestDatabases.create(kind);
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    if (!classScoped) {
      closeDatabase();
    }
  }

  private void closeDatabase() {
    TestDatabase d = database;
    database = null;
    if (d != null) {
      d.close();
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == TestDatabase.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return database();
  }
}
