package org.rhumbatron.checker;

import java.nio.file.Path;
import java.time.Clock;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.bucket.DirectoryBucket;

/**
 * What a check runs and breaks: its NATS ({@link CheckNats}), its cores ({@link CheckCores}) and
 * the database they share. One core keeps the audit archive in a directory bucket in its data
 * directory; several keep it in the NATS object store, where any of them can write it.
 */
final class CheckCluster implements AutoCloseable {
  private final Path dir;
  private final String dbUrl;
  private final CheckNats nats;
  private final CheckCores cores;

  CheckCluster(Path dir, String dbUrl, Path config, String token, CheckShape shape)
      throws Exception {
    this.dir = dir;
    this.dbUrl = dbUrl;
    this.nats = new CheckNats(dir, shape.natsServers());
    try {
      this.cores = new CheckCores(dir, shape.cores(), dbUrl, config, token, nats::proxiedUrl);
    } catch (Exception e) {
      nats.close();
      throw e;
    }
  }

  String dbUrl() {
    return dbUrl;
  }

  CheckNats nats() {
    return nats;
  }

  CheckCores cores() {
    return cores;
  }

  /**
   * The directory bucket of the audit archive of a single core, or null when the archive is in the
   * object store (read it through a NATS connection instead).
   */
  Bucket directoryArchive(Clock clock) {
    if (cores.count() != 1) {
      return null;
    }
    return DirectoryBucket.open(dir.resolve("core"), Bucket.EVIDENCE, clock);
  }

  @Override
  public void close() throws Exception {
    try {
      cores.close();
    } finally {
      nats.close();
    }
  }
}
