package org.rhumbatron.faults;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Damages a stopped nats-server 2.9 file store the way a machine crash does (the lost-tail tests
 * and the fault checker use it): the last messages of a stream's newest block are gone.
 *
 * <p>The layout (nats-server 2.9.10): {@code <store>/jetstream/$G/streams/<STREAM>/msgs/<n>.blk}
 * holds the messages, one record each: {@code uint32 length} (little endian, the high bit set when
 * the record has headers; the length covers the whole record), {@code uint64 seq}, {@code int64
 * timestamp}, {@code uint16 subject length}, subject, {@code uint32 header length} and headers when
 * present, data, and an 8-byte hash. Seen on 2.9.10: after a SIGKILL the block's {@code <n>.idx} is
 * stale anyway; cutting the {@code .blk} at a record boundary (or inside the last record) is
 * enough, the server rebuilds the block from its records at start ("Restored N messages") and comes
 * back with a shorter stream; deleting the {@code .idx} too gives the same result. The duplicate
 * window is rebuilt from the messages that remain, and new messages reuse the lost sequences.
 */
public final class NatsStoreDamage {
  private static final int HEADERS_BIT = 1 << 31;

  private NatsStoreDamage() {}

  /**
   * Cuts the last {@code count} messages off the newest block of the stream in {@code streamDir}
   * (the server must be stopped). Returns the sequences cut, in stream order.
   */
  public static List<Long> cutLastMessages(Path streamDir, int count) throws IOException {
    Path block = newestBlock(streamDir.resolve("msgs"));
    ByteBuffer records = ByteBuffer.wrap(Files.readAllBytes(block)).order(ByteOrder.LITTLE_ENDIAN);
    List<Integer> offsets = new ArrayList<>();
    List<Long> seqs = new ArrayList<>();
    int at = 0;
    while (at < records.limit()) {
      int length = records.getInt(at) & ~HEADERS_BIT;
      if (length <= 0 || at + length > records.limit()) {
        throw new IllegalStateException("cannot read the record at " + at + " of " + block);
      }
      offsets.add(at);
      seqs.add(records.getLong(at + 4) & Long.MAX_VALUE);
      at += length;
    }
    if (count > offsets.size()) {
      throw new IllegalArgumentException(
          block + " holds " + offsets.size() + " messages, fewer than " + count);
    }
    int keep = offsets.size() - count;
    try (FileChannel file = FileChannel.open(block, StandardOpenOption.WRITE)) {
      file.truncate(offsets.get(keep));
    }
    return List.copyOf(seqs.subList(keep, seqs.size()));
  }

  private static Path newestBlock(Path msgs) throws IOException {
    try (Stream<Path> files = Files.list(msgs)) {
      return files
          .filter(p -> p.getFileName().toString().endsWith(".blk"))
          .max(Comparator.comparingLong(NatsStoreDamage::blockNumber))
          .orElseThrow(() -> new IllegalStateException("no message block in " + msgs));
    }
  }

  private static long blockNumber(Path block) {
    String name = block.getFileName().toString();
    return Long.parseLong(name.substring(0, name.length() - ".blk".length()));
  }
}
