package org.rhumbatron.platform.bucket;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * The default bucket: one directory per bucket name under the data directory, one file per object,
 * the key's segments as subdirectories. A put writes a staging file, syncs it, stamps its
 * modification time from the injected clock (that is the upload time a listing reports) and moves
 * it over the object atomically, so a crash leaves the old object or the new one, never a part;
 * opening the bucket deletes staging files such a crash left. A delete prunes the directories it
 * empties.
 */
public final class DirectoryBucket implements Bucket {
  /** Staging files live here, inside the bucket so the move stays on one file system. */
  static final String STAGING = ".staging";

  private final String name;
  private final Path root;
  private final Path staging;
  private final Clock clock;

  private DirectoryBucket(String name, Path root, Clock clock) {
    this.name = name;
    this.root = root;
    this.staging = root.resolve(STAGING);
    this.clock = clock;
  }

  /**
   * Opens (creating when missing) the directory {@code dataDir/name}.
   *
   * @throws BucketException naming the directory when it cannot be created or is not writable
   */
  public static DirectoryBucket open(Path dataDir, String name, Clock clock) {
    Path root = dataDir.resolve(BucketKeys.checkBucketName(name)).toAbsolutePath().normalize();
    DirectoryBucket bucket = new DirectoryBucket(name, root, clock);
    try {
      Files.createDirectories(bucket.staging);
    } catch (FileAlreadyExistsException e) {
      throw new BucketException(
          "cannot open bucket " + name + ": " + e.getFile() + " exists and is not a directory", e);
    } catch (AccessDeniedException e) {
      throw new BucketException(
          "cannot open bucket " + name + ": permission denied creating " + e.getFile(), e);
    } catch (IOException e) {
      throw new BucketException("cannot open bucket " + name + " at " + root + ": " + e, e);
    }
    if (!Files.isWritable(root) || !Files.isWritable(bucket.staging)) {
      throw new BucketException("cannot open bucket " + name + ": " + root + " is not writable");
    }
    bucket.clearStaging();
    return bucket;
  }

  /** Deletes staging files a crash left; one core owns a data directory, so none is in flight. */
  private void clearStaging() {
    try (Stream<Path> leftovers = Files.list(staging)) {
      for (Path p : (Iterable<Path>) leftovers::iterator) {
        Files.deleteIfExists(p);
      }
    } catch (IOException | UncheckedIOException e) {
      throw new BucketException(
          "cannot clear staging files of bucket " + name + " in " + staging + ": " + e, e);
    }
  }

  @Override
  public String name() {
    return name;
  }

  /** The bucket's directory. */
  public Path directory() {
    return root;
  }

  @Override
  public void put(String key, byte[] bytes) {
    Path target = file(key);
    Path temp = staging.resolve(UUID.randomUUID() + ".partial");
    try {
      try (FileChannel out =
          FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        while (buffer.hasRemaining()) {
          out.write(buffer);
        }
        out.force(true); // the bytes are on disk before the rename makes them the object
      }
      Files.setLastModifiedTime(temp, FileTime.from(clock.instant()));
      try {
        moveIntoPlace(temp, target);
      } catch (NoSuchFileException e) {
        moveIntoPlace(temp, target); // a delete pruned the directory between; make it again
      }
    } catch (IOException e) {
      deleteQuietly(temp);
      throw failure("cannot write", key, target, e);
    }
  }

  @Override
  public Optional<byte[]> get(String key) {
    Path target = file(key);
    if (Files.isDirectory(target)) {
      return Optional.empty(); // a key prefix, not an object
    }
    try {
      return Optional.of(Files.readAllBytes(target));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException e) {
      throw failure("cannot read", key, target, e);
    }
  }

  @Override
  public List<BucketObject> list(String prefix) {
    BucketKeys.checkPrefix(name, prefix);
    // Walk only the deepest directory the prefix names, not the whole bucket.
    int slash = prefix.lastIndexOf('/');
    Path start = slash < 0 ? root : root.resolve(prefix.substring(0, slash));
    if (!Files.isDirectory(start)) {
      return List.of();
    }
    List<BucketObject> objects = new ArrayList<>();
    try (Stream<Path> files = Files.walk(start)) {
      files
          .filter(p -> !p.startsWith(staging))
          .forEach(
              p -> {
                String key = key(p);
                if (key.startsWith(prefix)) {
                  attributes(p).ifPresent(a -> objects.add(object(key, a)));
                }
              });
    } catch (IOException | UncheckedIOException e) {
      throw new BucketException("cannot list bucket " + name + " under " + start + ": " + e, e);
    }
    objects.sort(Comparator.comparing(BucketObject::key));
    return objects;
  }

  @Override
  public boolean delete(String key) {
    Path target = file(key);
    if (Files.isDirectory(target)) {
      return false; // a key prefix, not an object
    }
    try {
      boolean deleted = Files.deleteIfExists(target);
      pruneEmptyParents(target.getParent());
      return deleted;
    } catch (IOException e) {
      throw failure("cannot delete", key, target, e);
    }
  }

  private static void moveIntoPlace(Path temp, Path target) throws IOException {
    Files.createDirectories(target.getParent());
    Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  /** Removes directories the delete left empty, so a year of expiry leaves no empty tree. */
  private void pruneEmptyParents(Path dir) {
    for (Path d = dir; d != null && d.startsWith(root) && !d.equals(root); d = d.getParent()) {
      try {
        Files.delete(d);
      } catch (IOException e) {
        return; // not empty (or already gone): the directories above are not empty either
      }
    }
  }

  private Path file(String key) {
    BucketKeys.check(name, key);
    if (key.equals(STAGING) || key.startsWith(STAGING + "/")) {
      throw new BucketException(
          "bucket " + name + " refuses key '" + key + "': " + STAGING + "/ is reserved");
    }
    return root.resolve(key);
  }

  private String key(Path file) {
    return root.relativize(file).toString().replace(file.getFileSystem().getSeparator(), "/");
  }

  private static Optional<BasicFileAttributes> attributes(Path p) {
    try {
      BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
      return a.isRegularFile() ? Optional.of(a) : Optional.empty();
    } catch (NoSuchFileException e) {
      return Optional.empty(); // deleted while we walked
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static BucketObject object(String key, BasicFileAttributes a) {
    return new BucketObject(key, a.size(), a.lastModifiedTime().toInstant());
  }

  private BucketException failure(String what, String key, Path file, IOException e) {
    String reason = e instanceof AccessDeniedException ? "permission denied" : e.toString();
    return new BucketException(
        what + " object '" + key + "' of bucket " + name + " at " + file + ": " + reason, e);
  }

  private static void deleteQuietly(Path temp) {
    try {
      Files.deleteIfExists(temp);
    } catch (IOException ignored) {
      // the staging file is invisible to readers; the failure of the put is what matters
    }
  }

  @Override
  public String toString() {
    return "DirectoryBucket[" + root + "]";
  }
}
