package org.rhumbatron.router;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.db.TestDatabase;

class PostgresCatchUpTest extends CatchUpContract {
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.postgres();

  @Override
  TestDatabase db() {
    return database.database();
  }
}
