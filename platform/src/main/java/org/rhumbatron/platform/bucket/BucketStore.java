package org.rhumbatron.platform.bucket;

import io.nats.client.Connection;
import java.nio.file.Path;
import java.time.Clock;

/** Which store holds the bucket (setting {@code bucket.store}): a directory, or NATS. */
public enum BucketStore {
  /** The default: {@code <data dir>/<bucket name>/} on local disk. */
  DIRECTORY,
  /** A JetStream object store of the bucket's name, shared by every core on the cluster. */
  NATS;

  /**
   * Opens the bucket {@code name} in this store. {@code dataDir} is read by {@link #DIRECTORY},
   * {@code connection} and {@code replicas} (copies on a NATS cluster) by {@link #NATS}.
   */
  public Bucket open(String name, Path dataDir, Connection connection, Clock clock, int replicas) {
    return switch (this) {
      case DIRECTORY -> DirectoryBucket.open(dataDir, name, clock);
      case NATS -> NatsObjectStoreBucket.open(connection, name, clock, replicas);
    };
  }
}
