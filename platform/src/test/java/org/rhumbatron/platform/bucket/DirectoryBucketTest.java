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
    assertThat(dataDir.resolve("rhumbatron-evidence/.staging")).isEmptyDirectory();
    assertThatThrownBy(() -> bucket.get(".staging/0000.partial"))
        .isInstanceOf(BucketException.class)
        .hasMessageContaining("reserved");
  }

  @Test
  void aDeletePrunesTheDirectoriesItEmptiesAndALaterPutMakesThemAgain() {
    bucket.put("events/2025/01/01/stream-00/p1", bytes("1"));
    bucket.put("events/2025/01/02/stream-00/p2", bytes("2"));
    bucket.delete("events/2025/01/01/stream-00/p1");
    assertThat(dataDir.resolve("rhumbatron-evidence/events/2025/01/01")).doesNotExist();
    assertThat(dataDir.resolve("rhumbatron-evidence/events/2025/01/02/stream-00/p2")).exists();
    bucket.delete("events/2025/01/02/stream-00/p2");
    assertThat(dataDir.resolve("rhumbatron-evidence/events")).doesNotExist();
    assertThat(dataDir.resolve("rhumbatron-evidence")).isDirectory();
    bucket.put("events/2025/01/01/stream-00/p1", bytes("again"));
    assertThat(bucket.get("events/2025/01/01/stream-00/p1")).isPresent();
  }

  @Test
  void aDataDirectoryThatCannotHoldTheBucketIsAnErrorNamingThePath() throws Exception {
    Path notADirectory = Files.writeString(dataDir.resolve("plain-file"), "x");
    assertThatThrownBy(() -> DirectoryBucket.open(notADirectory, Bucket.EVIDENCE, clock))
        .isInstanceOf(BucketException.class)
        .hasMessageContaining(notADirectory.toString());
  }

  @Test
  void aBucketNameThatIsNotOneDirectoryNameIsRefused() {
    assertThatThrownBy(() -> DirectoryBucket.open(dataDir, "../elsewhere", clock))
        .isInstanceOf(BucketException.class)
        .hasMessageContaining("bucket name '../elsewhere'");
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
