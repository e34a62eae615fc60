package org.rhumbatron.platform.bucket;

import static org.assertj.core.api.Assertions.assertThat;

import io.nats.client.Connection;
import io.nats.client.api.ObjectInfo;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/** The object store bucket on a real nats-server, a fresh one (empty store) per test. */
class NatsObjectStoreBucketTest extends BucketContract {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  private Connection connection;

  @Override
  Bucket open(SettableClock clock) {
    try {
      if (connection == null) {
        connection = JetStreamConnections.connect(nats.url(), "bucket-test");
      }
      return NatsObjectStoreBucket.open(connection, Bucket.EVIDENCE, clock);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @AfterEach
  void close() throws Exception {
    connection.close();
  }

  @Test
  void theUploadTimeIsTheInjectedClocksNotTheServersWallClock() throws Exception {
    clock.set(Instant.parse("2001-01-01T00:00:00Z"));
    bucket.put("events/old", bytes("x"));
    ObjectInfo info = connection.objectStore(Bucket.EVIDENCE).getInfo("events/old");
    assertThat(info.getModified().toInstant()).isAfter(Instant.parse("2020-01-01T00:00:00Z"));
    assertThat(bucket.list("events/"))
        .singleElement()
        .extracting(BucketObject::uploadedAt)
        .isEqualTo(Instant.parse("2001-01-01T00:00:00Z"));
  }

  @Test
  void openingAgainBindsTheExistingBucketAndItsObjects() {
    bucket.put("events/kept", bytes("kept"));
    assertThat(open(clock).get("events/kept")).isPresent();
  }
}
