package org.rhumbatron.lifecycle;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.db.TestDatabase;

class PostgresProjectEndTest extends ProjectEndContract {
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.postgres();

  @Override
  TestDatabase db() {
    return database.database();
  }
}
