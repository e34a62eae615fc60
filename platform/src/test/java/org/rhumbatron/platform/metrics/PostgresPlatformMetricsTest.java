package org.rhumbatron.platform.metrics;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.db.TestDatabase;

class PostgresPlatformMetricsTest extends PlatformMetricsContract {
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.postgres();

  @Override
  TestDatabase db() {
    return database.database();
  }
}
