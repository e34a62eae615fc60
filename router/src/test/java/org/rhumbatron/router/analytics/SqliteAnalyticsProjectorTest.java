package org.rhumbatron.router.analytics;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.db.TestDatabase;

class SqliteAnalyticsProjectorTest extends AnalyticsProjectorContract {
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.sqlite();

  @Override
  TestDatabase db() {
    return database.database();
  }
}
