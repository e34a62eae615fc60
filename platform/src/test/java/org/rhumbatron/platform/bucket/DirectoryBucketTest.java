package org.rhumbatron.platform.bucket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.testkit.SettableClock;

class DirectoryBucketTest extends BucketContract {
  @TempDir Path dataDir;

  @Override
  Bucket open(SettableClock clock) {
    return DirectoryBucket.open(dataDir, Bucket.EVIDENCE, clock);
  }

  @Test
  void theBucketIsADirectoryNamedAfterItUnderTheDataDirectory() {
    bucket.put("events/x", bytes("x"));
    assertThat(dataDir.resolve("rhumbatron-evidence/events/x")).hasContent("x");
  }

  @Test
  void aStagingFileLeftByACrashIsNeverAnObject() throws Exception {
    bucket.put("events/kept", bytes("whole"));
    // What a crash between write and move leaves: a partial file in the staging directory.
    Files.writeString(dataDir.resolve("rhumbatron-evidence/.staging/0000.partial"), "half an obj");
    assertThat(bucket.list("")).extracting(BucketObject::key).containsExactly("events/kept");
    assertThat(open(clock).list("")).extracting(BucketObject::key).containsExactly("events/kept");
    assertThatThrownBy(() -> bucket.get(".staging/0000.partial"))
        .isInstanceOf(BucketException.class)
        .hasMessageContaining("reserved");
  }

  @Test
  void aDataDirectoryThatCannotHoldTheBucketIsAnErrorNamingThePath() throws Exception {
    Path notADirectory = Files.writeString(dataDir.resolve("plain-file"), "x");
    assertThatThrownBy(() -> DirectoryBucket.open(notADirectory, Bucket.EVIDENCE, clock))
        .isInstanceOf(BucketException.class)
        .hasMessageContaining(notADirectory.toString());
  }

  @Test
  void aPutWhoseDirectoryCannotBeMadeIsAnErrorNamingThePath() {
    bucket.put("events/a", bytes("a"));
    assertThatThrownBy(() -> bucket.put("events/a/b", bytes("b")))
        .isInstanceOf(BucketException.class)
        .hasMessageContaining("events/a/b")
        .hasMessageContaining(dataDir.resolve("rhumbatron-evidence").toString());
    assertThat(bucket.list("")).extracting(BucketObject::key).containsExactly("events/a");
  }
}
