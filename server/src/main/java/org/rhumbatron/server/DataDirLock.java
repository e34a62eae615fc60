package org.rhumbatron.server;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One core per data directory: an OS lock on {@code core.lock} in {@code --data}, with the holder's
 * pid written in it; likewise one core per SQLite file ({@code <file>.core.lock}, with the node id
 * too). The OS drops the lock when its process dies, so a lock file left by a killed core is taken
 * over; a live one refuses the second core with one line naming the directory and the pid. The file
 * stays after {@link #close} (emptied): deleting it could let a third core lock a fresh file while
 * a second holds the deleted one.
 */
public final class DataDirLock implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DataDirLock.class);
  static final String FILE_NAME = "core.lock";

  /** Another live process holds the data directory. */
  static final class InUseException extends IllegalStateException {
    InUseException(String message) {
      super(message);
    }
  }

  private final Path file;
  private final FileChannel channel;
  private final FileLock lock;

  private DataDirLock(Path file, FileChannel channel, FileLock lock) {
    this.file = file;
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Locks {@code dataDir} (created if missing) for this process.
   *
   * @throws InUseException when a running core holds it
   */
  static DataDirLock acquire(Path dataDir) throws IOException {
    Files.createDirectories(dataDir);
    String dir = dataDir.toAbsolutePath().normalize().toString();
    return lock(
        dataDir.resolve(FILE_NAME),
        null,
        held ->
            "data directory "
                + dir
                + " is in use by another core ("
                + held
                + "): stop that core or give another --data");
  }

  /**
   * Locks the SQLite file {@code database} for this core, named {@code nodeId}: SQLite is one node
   * , wherever its file lies. The lock is {@code <file>.core.lock} beside it.
   *
   * @throws InUseException when a running core holds it
   */
  static DataDirLock sqlite(Path database, String nodeId) throws IOException {
    Path file = database.toAbsolutePath().normalize();
    if (file.getParent() != null) {
      Files.createDirectories(file.getParent());
    }
    return lock(
        file.resolveSibling(file.getFileName() + "." + FILE_NAME),
        nodeId,
        held ->
            "SQLite database "
                + file
                + " is in use by another core ("
                + held
                + "): SQLite runs one core; stop that core, or run several on PostgreSQL");
  }

  /**
   * Takes the OS lock on {@code file} and writes this process's pid (and {@code nodeId}) in it, or
   * refuses with {@code refusal} of the holder ("pid N" or "pid N, node X").
   */
  private static DataDirLock lock(
      Path file, String nodeId, java.util.function.UnaryOperator<String> refusal)
      throws IOException {
    FileChannel channel =
        FileChannel.open(
            file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
    FileLock lock;
    try {
      lock = channel.tryLock();
    } catch (OverlappingFileLockException e) {
      lock = null; // a core of this same JVM holds it
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
    String previous;
    try {
      previous = holder(channel);
    } catch (IOException e) {
      previous = "";
    }
    if (lock == null) {
      channel.close();
      throw new InUseException(refusal.apply(shown(previous)));
    }
    try {
      long pid = ProcessHandle.current().pid();
      String line = nodeId == null ? Long.toString(pid) : pid + " " + nodeId;
      channel.truncate(0);
      channel.write(ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8)), 0);
      channel.force(true);
      String previousPid = previous.split(" ", 2)[0];
      if (!previous.isEmpty() && !previousPid.equals(Long.toString(pid))) {
        log.info("took over {} from pid {}, which no longer holds it", file, previousPid);
      }
    } catch (IOException | RuntimeException e) {
      lock.release();
      channel.close();
      throw e;
    }
    return new DataDirLock(file, channel, lock);
  }

  /** The holder line "PID [NODE]" as a message shows it. */
  private static String shown(String holder) {
    if (holder.isEmpty()) {
      return "pid unknown";
    }
    String[] parts = holder.split(" ", 2);
    return "pid " + parts[0] + (parts.length == 2 ? ", node " + parts[1] : "");
  }

  /**
   * Refuses {@code dataDir} when a running core holds it, before a caller writes there (the demo's
   * log); the core it starts takes the lock itself.
   *
   * @throws InUseException when a running core holds it
   */
  public static void refuseIfHeld(Path dataDir) throws IOException {
    acquire(dataDir).close();
  }

  /** The pid written in the lock file, or empty. */
  private static String holder(FileChannel channel) throws IOException {
    ByteBuffer buf = ByteBuffer.allocate(512);
    channel.read(buf, 0);
    return new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8).trim();
  }

  Path file() {
    return file;
  }

  @Override
  public void close() throws IOException {
    if (!channel.isOpen()) {
      return;
    }
    try {
      channel.truncate(0);
      lock.release();
    } finally {
      channel.close();
    }
  }
}
