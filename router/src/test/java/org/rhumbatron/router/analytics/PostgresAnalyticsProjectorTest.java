package org.rhumbatron.router.analytics;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.db.TestDatabase;

class PostgresAnalyticsProjectorTest extends AnalyticsProjectorContract {
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.postgres();

  @Override
  TestDatabase db() {
    return database.database();
  }
}
