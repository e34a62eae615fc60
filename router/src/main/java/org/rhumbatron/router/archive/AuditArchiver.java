package org.rhumbatron.router.archive;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.bucket.BucketException;
import org.rhumbatron.platform.bucket.BucketObject;
import org.rhumbatron.platform.cluster.FencedException;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.DatabaseException;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.router.claims.EventClaims;
import org.rhumbatron.router.run.BatchOutcome;
import org.rhumbatron.router.run.SubscriptionHandler;
import org.rhumbatron.router.run.Unavailable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The seed's {@code audit-archiver}: one fetched batch becomes one gzip NDJSON object under its
 * {@link ArchiveKey} in the evidence bucket. A redelivery of the same batch writes the same key
 * with the same bytes. Records whose acks were lost can come back in a batch of another
 * composition, so the archiver also claims each archived Event ({@code processed_events}, after the
 * object is written) and leaves out of a batch the Events an earlier object already holds. A bucket
 * that fails fails the batch, which comes back later; a malformed record is archived, never claimed
 * ({@link ArchiveLines}).
 *
 * <p>An object's key is recorded ({@code archive_intents}) before its put and forgotten with its
 * claims, so the put of a core killed between the two is found by the stream's next batch, which
 * deletes its object whatever shape the batch comes back in.
 *
 * <p>With several cores the claims decide which object holds an Event: the batch is read and its
 * object claimed under one epoch of the stream's duty, every Event or none, and an object whose
 * claims were fenced or found an Event already claimed is deleted (its key is its epoch's alone).
 */
public final class AuditArchiver implements SubscriptionHandler {
  public static final String CONSUMER = Subscription.AUDIT_ARCHIVER.durableName();

  private static final Logger log = LoggerFactory.getLogger(AuditArchiver.class);
  // How many earlier epochs of a stream a redelivered batch looks for unclaimed objects of.
  private static final int ORPHAN_EPOCHS = 4;

  private static final String INTEND =
      "INSERT INTO archive_intents (object_key, stream_index) VALUES (?, ?) ON CONFLICT DO NOTHING";
  private static final String FULFIL = "DELETE FROM archive_intents WHERE object_key = ?";

  private final Bucket bucket;
  private final ArchiveLines lines;
  private final Database db;
  private final EventClaims claims;

  public AuditArchiver(Bucket bucket, EnvelopeCodec codec, Database db, EventClaims claims) {
    this.bucket = bucket;
    this.lines = new ArchiveLines(codec);
    this.db = db;
    this.claims = claims;
  }

  @Override
  public Subscription subscription() {
    return Subscription.AUDIT_ARCHIVER;
  }

  @Override
  public BatchOutcome handle(int streamIndex, List<EventRecord> records) {
    if (records.isEmpty()) {
      return BatchOutcome.allApplied();
    }
    Fresh batch;
    try {
      batch = db.inTransaction(tx -> notArchivedYet(tx, streamIndex, records));
    } catch (DatabaseException e) {
      return outcome(records, e, "cannot read the archiver's claims: " + e.getMessage());
    }
    deleteDeadPuts(streamIndex, batch);
    List<EventRecord> fresh = batch.records();
    if (fresh.isEmpty()) {
      return BatchOutcome.allApplied();
    }
    String key = batch.key();
    try {
      bucket.put(key, lines.gzip(fresh));
    } catch (BucketException e) {
      log.warn("audit archive of {} records failed: {}", fresh.size(), e.getMessage());
      // The bucket (a JetStream object store or a directory) being out of reach is never the
      // Events' fault.
      return BatchOutcome.waiting(
          records, "cannot archive " + fresh.size() + " records to " + key + ": " + e.getMessage());
    }
    List<String> ids =
        fresh.stream().filter(EventRecord::decoded).map(r -> r.event().eventId()).toList();
    try {
      db.inTransaction(tx -> claimAll(tx, streamIndex, batch.epoch(), key, ids));
    } catch (FencedException | NotFresh e) {
      // Rolled back for certain: the object's Events are another object's, or will be.
      delete(key);
      return BatchOutcome.waiting(records, "archived to " + key + " but " + e.getMessage());
    } catch (DatabaseException e) {
      withdraw(streamIndex, batch.epoch(), key, ids);
      return outcome(records, e, "archived to " + key + " but cannot record it: " + e.getMessage());
    }
    log.debug("archived {} records of stream {} to {}", fresh.size(), streamIndex, key);
    deleteOrphans(streamIndex, fresh, batch.epoch());
    deleteCoveredOrphans(key, fresh);
    return BatchOutcome.allApplied();
  }

  /** Waiting when the database was out of reach, else a failure that counts. */
  private static BatchOutcome outcome(List<EventRecord> records, DatabaseException e, String why) {
    return Unavailable.infrastructure(e)
        ? BatchOutcome.waiting(records, why)
        : BatchOutcome.failed(records, why);
  }

  /**
   * After the claims of a redelivered batch committed: the objects that nodes of the {@value
   * #ORPHAN_EPOCHS} earlier epochs of the stream put for the same records and then died before
   * their claims (a SIGKILL between the two). None of them holds a committed claim: every claim of
   * an earlier epoch committed before this node took the stream, and this batch found the records
   * unclaimed.
   */
  private void deleteOrphans(int streamIndex, List<EventRecord> fresh, long epoch) {
    if (epoch <= 1 || fresh.stream().allMatch(r -> r.deliveredCount() <= 1)) {
      return;
    }
    for (long e = epoch - 1; e >= Math.max(1, epoch - ORPHAN_EPOCHS); e--) {
      String orphan = ArchiveKey.of(streamIndex, fresh, e);
      try {
        if (bucket.delete(orphan)) {
          log.info("deleted archive object {}: its node put it and never claimed it", orphan);
        }
      } catch (RuntimeException ex) {
        log.warn("cannot delete unclaimed archive object {}: {}", orphan, ex.toString());
      }
    }
  }

  /**
   * After the claims of a redelivered batch committed: the other objects of the same first Event
   * ({@code part-<firstMs>-}) that hold only records of this batch. A node that put one died before
   * its claims, and the batch came back composed otherwise (more records fetched), so under another
   * key. None of them holds a committed claim: this batch found all its Events unclaimed. An object
   * with a record outside this batch stays: archived twice rather than never.
   */
  private void deleteCoveredOrphans(String key, List<EventRecord> fresh) {
    if (fresh.stream().allMatch(r -> r.deliveredCount() <= 1)) {
      return;
    }
    Set<String> batchIds = new HashSet<>();
    fresh.forEach(r -> batchIds.add(ArchiveKey.id(r)));
    String samePart = key.substring(0, key.lastIndexOf('-') + 1);
    try {
      for (BucketObject other : bucket.list(samePart)) {
        if (other.key().equals(key)) {
          continue;
        }
        Optional<byte[]> body = bucket.get(other.key());
        if (body.isPresent()
            && batchIds.containsAll(ArchiveLines.ids(body.get()))
            && bucket.delete(other.key())) {
          log.info("deleted archive object {}: {} holds its records, claimed", other.key(), key);
        }
      }
    } catch (RuntimeException ex) {
      log.warn("cannot look for unclaimed archive objects beside {}: {}", key, ex.toString());
    }
  }

  /**
   * A batch less what an earlier object holds, read under the stream's fence at {@code epoch}; the
   * key its object goes under (null when nothing is fresh), its put's intent recorded; and the keys
   * of the stream's other puts whose claims never committed.
   */
  private record Fresh(long epoch, List<EventRecord> records, String key, List<String> deadPuts) {}

  /**
   * Deletes the objects of puts whose claims never committed (their {@code archive_intents} rows
   * are left), then the rows. They are all dead: a stream's batches run one at a time on the node
   * that holds it, and this batch has not recorded its own yet. An object that cannot be deleted
   * keeps its row for the next batch.
   */
  private void deleteDeadPuts(int streamIndex, Fresh batch) {
    List<String> deleted = new ArrayList<>();
    for (String key : batch.deadPuts()) {
      try {
        if (bucket.delete(key)) {
          log.info("deleted archive object {}: its put's claims never committed", key);
        }
        deleted.add(key);
      } catch (RuntimeException e) {
        log.warn("cannot delete archive object {} of a dead put: {}", key, e.toString());
      }
    }
    if (deleted.isEmpty()) {
      return;
    }
    try {
      db.inTransaction(
          tx -> {
            claims.fence(tx, streamIndex, batch.epoch());
            for (String key : deleted) {
              tx.update(FULFIL, key);
            }
            return null;
          });
    } catch (RuntimeException e) {
      log.warn("cannot forget the dead puts of stream {}: {}", streamIndex, e.toString());
    }
  }

  /** The claims of an object named some Events another object holds: nothing of them commits. */
  private static final class NotFresh extends RuntimeException {
    NotFresh(int fresh, int ids) {
      super("only " + fresh + " of its " + ids + " Events were not archived yet");
    }
  }

  /**
   * Claims every id of the object and forgets its put's intent in one transaction, at the epoch its
   * batch was read under: a node that lost the stream and took it again since may find them
   * archived by the node in between.
   */
  private Void claimAll(Tx tx, int streamIndex, long epoch, String key, List<String> ids)
      throws SQLException {
    claims.fence(tx, streamIndex, epoch);
    int fresh = claims.claimEvents(tx, streamIndex, CONSUMER, ids).size();
    if (fresh != ids.size()) {
      throw new NotFresh(fresh, ids.size());
    }
    tx.update(FULFIL, key);
    return null;
  }

  /**
   * After the claims of the object under {@code key} failed without knowing whether they committed:
   * they commit all or none, so when the stream is still held at {@code epoch} (no other node can
   * have claimed since) or only some are claimed, the claims tell; the object goes unless they
   * committed. When another node holds the stream and every Event is claimed it cannot be told, and
   * the object stays: an Event archived twice rather than never.
   */
  private void withdraw(int streamIndex, long epoch, String key, List<String> ids) {
    try {
      if (ids.isEmpty()) {
        delete(key);
        return;
      }
      boolean[] stillHeld = {true};
      int claimed =
          db.inTransaction(
              tx -> {
                try {
                  claims.fence(tx, streamIndex, epoch);
                } catch (FencedException e) {
                  stillHeld[0] = false;
                }
                return claims.claimedAmong(tx, CONSUMER, ids).size();
              });
      if (claimed < ids.size()) {
        delete(key);
      } else if (!stillHeld[0]) {
        log.warn(
            "archive object {} stays: its claims may have committed before stream {} moved on",
            key,
            streamIndex);
      }
    } catch (RuntimeException e) {
      log.warn("cannot withdraw archive object {} after its claims failed: {}", key, e.toString());
    }
  }

  private void delete(String key) {
    try {
      bucket.delete(key);
    } catch (RuntimeException e) {
      log.warn("cannot withdraw archive object {} after its claims failed: {}", key, e.toString());
    }
  }

  /**
   * {@code records} less the decoded Events an earlier object holds, in stream order, read under
   * the stream's fence: every claim of an earlier epoch committed before this node took the stream.
   * In the same transaction the fresh records' put is recorded before it is made.
   */
  private Fresh notArchivedYet(Tx tx, int streamIndex, List<EventRecord> records)
      throws SQLException {
    long epoch = claims.fence(tx, streamIndex);
    List<String> ids =
        records.stream().filter(EventRecord::decoded).map(r -> r.event().eventId()).toList();
    Set<String> archived = ids.isEmpty() ? Set.of() : claims.claimedAmong(tx, CONSUMER, ids);
    List<EventRecord> fresh = new ArrayList<>(records.size());
    for (EventRecord r : records) {
      if (!r.decoded() || !archived.contains(r.event().eventId())) {
        fresh.add(r);
      }
    }
    String key = fresh.isEmpty() ? null : ArchiveKey.of(streamIndex, fresh, epoch);
    // A row of this very key is this put's own (the same batch again): its object is overwritten.
    List<String> deadPuts =
        tx.query(
            "SELECT object_key FROM archive_intents WHERE stream_index = ? ORDER BY object_key",
            rs -> rs.getString(1),
            streamIndex);
    deadPuts = deadPuts.stream().filter(k -> !k.equals(key)).toList();
    if (key != null) {
      tx.update(INTEND, key, streamIndex);
    }
    return new Fresh(epoch, fresh, key, deadPuts);
  }
}
