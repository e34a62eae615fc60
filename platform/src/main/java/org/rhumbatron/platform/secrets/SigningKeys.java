package org.rhumbatron.platform.secrets;

import java.security.SecureRandom;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import org.rhumbatron.platform.db.Database;

/**
 * The table {@code signing_keys}, its one writer. A key belongs to a {@link Purpose}; it is current
 * until a newer key of its purpose is made, then counts for an overlap and expires. Keys never
 * leave core except a webhook secret, once, to the operator who made it.
 */
public final class SigningKeys {
  /** Bytes of a fresh key: 256 bits, HMAC-SHA256's block-size-safe key length. */
  public static final int KEY_BYTES = 32;

  private static final SecureRandom RANDOM = new SecureRandom();

  /** What a key signs. */
  public enum Purpose {
    /** Task tokens of Agents: the newest key signs, every unexpired key checks. */
    TASK_TOKEN,
    /** The secrets webhooks are signed with: every unexpired key signs. */
    WEBHOOK;

    String dbName() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  /** One key; {@code expiresAt} is null while it is current. */
  public record Key(String keyId, byte[] secret, Instant createdAt, Instant expiresAt) {
    public Key {
      secret = secret.clone();
    }

    @Override
    public byte[] secret() {
      return secret.clone();
    }

    /** {@code whsec_} and the key's bytes in base64, as a webhook receiver configures it. */
    public String webhookSecret() {
      return WEBHOOK_SECRET_PREFIX + Base64.getEncoder().encodeToString(secret);
    }

    public boolean validAt(Instant now) {
      return expiresAt == null || now.isBefore(expiresAt);
    }

    @Override
    public String toString() {
      return "Key[" + keyId + ", created " + createdAt + ", expires " + expiresAt + "]";
    }
  }

  /** How a webhook secret is shown to the operator who made it: Standard Webhooks' form. */
  public static final String WEBHOOK_SECRET_PREFIX = "whsec_";

  private final Database database;
  private final Clock clock;

  public SigningKeys(Database database, Clock clock) {
    this.database = database;
    this.clock = clock;
  }

  /** The unexpired keys of {@code purpose}, newest first. */
  public List<Key> valid(Purpose purpose) {
    long now = clock.millis();
    return database.read(
        tx ->
            tx.query(
                "SELECT key_id, secret, created_at_ms, expires_at_ms FROM signing_keys"
                    + " WHERE purpose = ? AND (expires_at_ms IS NULL OR expires_at_ms > ?)"
                    + " ORDER BY created_at_ms DESC, key_id DESC",
                SigningKeys::key,
                purpose.dbName(),
                now));
  }

  /**
   * Makes a new current key of {@code purpose}; the keys current until now expire after {@code
   * overlap}, in the same transaction. Expired keys are deleted on the way.
   */
  public Key rotate(Purpose purpose, Duration overlap) {
    Instant now = clock.instant();
    byte[] secret = new byte[KEY_BYTES];
    RANDOM.nextBytes(secret);
    byte[] id = new byte[8];
    RANDOM.nextBytes(id);
    Key key = new Key(HexFormat.of().formatHex(id), secret, now, null);
    database.inTransaction(
        tx -> {
          tx.update(
              "DELETE FROM signing_keys WHERE purpose = ? AND expires_at_ms <= ?",
              purpose.dbName(),
              now.toEpochMilli());
          tx.update(
              "UPDATE signing_keys SET expires_at_ms = ? WHERE purpose = ? AND expires_at_ms IS"
                  + " NULL",
              now.plus(overlap).toEpochMilli(),
              purpose.dbName());
          tx.update(
              "INSERT INTO signing_keys (key_id, purpose, secret, created_at_ms, expires_at_ms)"
                  + " VALUES (?, ?, ?, ?, NULL)",
              key.keyId(),
              purpose.dbName(),
              Base64.getEncoder().encodeToString(secret),
              now.toEpochMilli());
          return null;
        });
    return key;
  }

  /** Ends key {@code keyId} of {@code purpose} now; false when there is no such unexpired key. */
  public boolean revoke(Purpose purpose, String keyId) {
    long now = clock.millis();
    return database.inTransaction(
            tx ->
                tx.update(
                    "UPDATE signing_keys SET expires_at_ms = ? WHERE purpose = ? AND key_id = ?"
                        + " AND (expires_at_ms IS NULL OR expires_at_ms > ?)",
                    now,
                    purpose.dbName(),
                    keyId,
                    now))
        > 0;
  }

  private static Key key(ResultSet row) throws SQLException {
    long expires = row.getLong("expires_at_ms");
    boolean current = row.wasNull();
    return new Key(
        row.getString("key_id"),
        Base64.getDecoder().decode(row.getString("secret")),
        Instant.ofEpochMilli(row.getLong("created_at_ms")),
        current ? null : Instant.ofEpochMilli(expires));
  }
}
