package org.rhumbatron.router.claims;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.db.TestDatabase;

class SqliteEventClaimsTest extends EventClaimsContract {
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.sqlite();

  @Override
  TestDatabase db() {
    return database.database();
  }
}
