package org.rhumbatron.lifecycle;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.db.TestDatabase;

class SqliteProjectEndTest extends ProjectEndContract {
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.sqlite();

  @Override
  TestDatabase db() {
    return database.database();
  }
}
