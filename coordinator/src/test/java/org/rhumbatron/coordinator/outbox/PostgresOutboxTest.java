package org.rhumbatron.coordinator.outbox;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.db.TestDatabase;

class PostgresOutboxTest extends OutboxContract {
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.postgres();

  @Override
  TestDatabase db() {
    return database.database();
  }
}
