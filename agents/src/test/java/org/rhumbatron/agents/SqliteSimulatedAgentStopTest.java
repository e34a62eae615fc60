package org.rhumbatron.agents;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.db.TestDatabase;

class SqliteSimulatedAgentStopTest extends SimulatedAgentStopContract {
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.sqlite();

  @Override
  TestDatabase db() {
    return database.database();
  }
}
