package org.rhumbatron.testkit.db;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** A SQLite file {@code test.db} in a fresh temporary directory; close deletes the directory. */
final class SqliteTestDatabase implements TestDatabase {

  private final Path directory;
  private final Path file;

  private SqliteTestDatabase(Path directory) {
    this.directory = directory;
    this.file = directory.resolve("test.db");
  }

  static SqliteTestDatabase create() {
    try {
      return new SqliteTestDatabase(Files.createTempDirectory("rt-sqlite-"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a temporary directory for SQLite", e);
    }
  }

  @Override
  public Kind kind() {
    return Kind.SQLITE;
  }

  @Override
  public String url() {
    return "jdbc:sqlite:" + file;
  }

  @Override
  public String name() {
    return file.toString();
  }

  /** The temporary directory that holds the file (and its -wal and -shm companions). */
  public Path directory() {
    return directory;
  }

  @Override
  public void close() {
    try (Stream<Path> paths = Files.walk(directory)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + directory, e);
    }
  }

  @Override
  public String toString() {
    return "SQLite " + file;
  }
}
