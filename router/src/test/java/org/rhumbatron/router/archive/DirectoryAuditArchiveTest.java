package org.rhumbatron.router.archive;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.bucket.DirectoryBucket;
import org.rhumbatron.router.EventLogFixture;
import org.rhumbatron.testkit.SettableClock;

class DirectoryAuditArchiveTest extends AuditArchiveContract {
  @TempDir Path dataDir;

  @Override
  Bucket open(EventLogFixture log, SettableClock clock) {
    return DirectoryBucket.open(dataDir, Bucket.EVIDENCE, clock);
  }

  @Override
  void breakBucket() throws Exception {
    // A file where the archive's top directory belongs: no key under events/ can be written.
    Files.writeString(dataDir.resolve(Bucket.EVIDENCE).resolve("events"), "in the way");
  }
}
