package org.rhumbatron.platform.bucket;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.ObjectStore;
import io.nats.client.ObjectStoreManagement;
import io.nats.client.api.ObjectInfo;
import io.nats.client.api.ObjectMeta;
import io.nats.client.api.ObjectStoreConfiguration;
import io.nats.client.api.ObjectStoreStatus;
import io.nats.client.api.StorageType;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.platform.jetstream.TopologyException;

/**
 * The bucket as a NATS JetStream object store of the same name (file storage), for core against a
 * NATS cluster. Object names are the keys as they are ({@code /} works). The server stamps an
 * object with its own wall clock, so the upload time read from the injected clock is kept in the
 * object's metadata under {@link #UPLOADED_AT_MS} and preferred by {@link #list}. A closed
 * connection (jnats: {@link IllegalStateException}) is a {@link BucketException} like any failure.
 */
public final class NatsObjectStoreBucket implements Bucket {
  /** Metadata entry: the upload time in epoch milliseconds, from the injected clock. */
  public static final String UPLOADED_AT_MS = "rhumbatron-uploaded-at-ms";

  private final String name;
  private final ObjectStore store;
  private final Clock clock;

  private NatsObjectStoreBucket(String name, ObjectStore store, Clock clock) {
    this.name = name;
    this.store = store;
    this.clock = clock;
  }

  /** {@link #open(Connection, String, Clock, int)} with one replica. */
  public static NatsObjectStoreBucket open(Connection connection, String name, Clock clock) {
    return open(connection, name, clock, 1);
  }

  /**
   * Binds the object store {@code name}, creating it (file storage, {@code replicas} copies on a
   * NATS cluster) when the server has none, and giving an existing one {@code replicas} copies when
   * it has another count.
   *
   * @throws BucketException naming the bucket when the server refuses
   */
  public static NatsObjectStoreBucket open(
      Connection connection, String name, Clock clock, int replicas) {
    BucketKeys.checkBucketName(name);
    try {
      ObjectStoreManagement management = connection.objectStoreManagement();
      if (!management.getBucketNames().contains(name)) {
        ObjectStoreStatus made =
            management.create(
                ObjectStoreConfiguration.builder(name)
                    .storageType(StorageType.File)
                    .replicas(replicas)
                    .build());
        if (made.getReplicas() != replicas) {
          throw new BucketException(
              "object store bucket "
                  + name
                  + " was made with "
                  + made.getReplicas()
                  + " replicas instead of "
                  + replicas
                  + " (streams.replicas): nats-server runs without a cluster or with fewer"
                  + " servers");
        }
      } else {
        JetStreamTopology.ensureReplicas(
            connection.jetStreamManagement(), STREAM_PREFIX + name, replicas);
      }
      return new NatsObjectStoreBucket(name, connection.objectStore(name), clock);
    } catch (IOException | JetStreamApiException | TopologyException e) {
      throw new BucketException("cannot open object store bucket " + name + ": " + e, e);
    }
  }

  /** The stream under an object store bucket (jnats and nats-server name it so). */
  static final String STREAM_PREFIX = "OBJ_";

  @Override
  public String name() {
    return name;
  }

  @Override
  public void put(String key, byte[] bytes) {
    BucketKeys.check(name, key);
    ObjectMeta meta =
        ObjectMeta.builder(key)
            .metadata(Map.of(UPLOADED_AT_MS, Long.toString(clock.millis())))
            .build();
    try {
      store.put(meta, new ByteArrayInputStream(bytes));
    } catch (IOException
        | JetStreamApiException
        | NoSuchAlgorithmException
        | IllegalStateException e) {
      throw failure("cannot write", key, e);
    }
  }

  @Override
  public Optional<byte[]> get(String key) {
    BucketKeys.check(name, key);
    try {
      ObjectInfo info = store.getInfo(key);
      if (info == null || info.isDeleted()) {
        return Optional.empty();
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream((int) Math.max(0, info.getSize()));
      store.get(key, out);
      return Optional.of(out.toByteArray());
    } catch (IOException
        | JetStreamApiException
        | NoSuchAlgorithmException
        | IllegalStateException e) {
      throw failure("cannot read", key, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw failure("interrupted reading", key, e);
    }
  }

  @Override
  public List<BucketObject> list(String prefix) {
    BucketKeys.checkPrefix(name, prefix);
    List<ObjectInfo> infos;
    try {
      infos = store.getList();
    } catch (IOException | JetStreamApiException | IllegalStateException e) {
      throw new BucketException("cannot list object store bucket " + name + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BucketException("interrupted listing object store bucket " + name, e);
    }
    List<BucketObject> objects = new ArrayList<>();
    for (ObjectInfo info : infos) {
      if (!info.isDeleted() && info.getObjectName().startsWith(prefix)) {
        objects.add(new BucketObject(info.getObjectName(), info.getSize(), uploadedAt(info)));
      }
    }
    objects.sort(Comparator.comparing(BucketObject::key));
    return objects;
  }

  @Override
  public boolean delete(String key) {
    BucketKeys.check(name, key);
    try {
      ObjectInfo info = store.getInfo(key);
      if (info == null || info.isDeleted()) {
        return false;
      }
      store.delete(key);
      return true;
    } catch (IOException | JetStreamApiException | IllegalStateException e) {
      throw failure("cannot delete", key, e);
    }
  }

  /** The clock's upload time from the metadata; the server's mtime for an object put by others. */
  private static Instant uploadedAt(ObjectInfo info) {
    Map<String, String> metadata = info.getMetaData();
    String ms = metadata == null ? null : metadata.get(UPLOADED_AT_MS);
    if (ms != null) {
      try {
        return Instant.ofEpochMilli(Long.parseLong(ms));
      } catch (NumberFormatException e) {
        // not ours: fall back to the server's time below
      }
    }
    return info.getModified().toInstant();
  }

  private BucketException failure(String what, String key, Exception e) {
    return new BucketException(
        what + " object '" + key + "' of object store bucket " + name + ": " + e, e);
  }

  @Override
  public String toString() {
    return "NatsObjectStoreBucket[" + name + "]";
  }
}
