package org.rhumbatron.api;

import java.security.SecureRandom;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.protocol.Sha256;

/**
 * The {@code credentials} table, whose only writer this is: a credential is created with a role and
 * a name, its token shown once and kept as its SHA-256 alone, and revoked by its id. Every request
 * looks its token's hash up, without a cache, so a revocation holds from its commit on every core
 * that shares the database. A token is 32 random bytes: a plain hash suffices, no slow password
 * hash is needed to stop guessing.
 */
final class Credentials {
  static final String TOKEN_PREFIX = "rbt_";
  static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._ -]{0,63}");
  // last_used_at_ms is written at most this often per credential, not on every request.
  static final Duration LAST_USED_EVERY = Duration.ofMinutes(1);
  private static final String COLUMNS =
      "credential_id, role, name, rate_limit, created_at_ms, last_used_at_ms, revoked_at_ms";

  private final Database database;
  private final Clock clock;
  private final SecureRandom random = new SecureRandom();

  Credentials(Database database, Clock clock) {
    this.database = database;
    this.clock = clock;
  }

  /** One row, without its hash. {@code rateLimit} null: the setting {@code api.rate-limit}. */
  record Credential(
      String id,
      Role role,
      String name,
      Integer rateLimit,
      long createdAtMs,
      Long lastUsedAtMs,
      Long revokedAtMs) {}

  /** A credential just created, with its token: the only time the token is known. */
  record Created(Credential credential, String token) {
    // The token is shown once, in the answer, and never in a log line.
    @Override
    public String toString() {
      return "Created[" + credential + "]";
    }
  }

  Created create(Role role, String name, Integer rateLimit) {
    if (name == null || !NAME.matcher(name).matches()) {
      throw ApiException.badRequest(
          "name",
          "1 to 64 letters, digits, '.', '_', '-' or spaces, starting with a letter or digit");
    }
    if (rateLimit != null && rateLimit <= 0) {
      throw ApiException.badRequest("rateLimit", "requests per second, a whole number > 0");
    }
    String id = "cred_" + HexFormat.of().formatHex(bytes(8));
    String token = TOKEN_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes(32));
    long now = clock.millis();
    database.inTransaction(
        tx ->
            tx.update(
                "INSERT INTO credentials (credential_id, token_sha256, role, name, rate_limit,"
                    + " created_at_ms) VALUES (?, ?, ?, ?, ?, ?)",
                id,
                sha256(token),
                role.wireName(),
                name,
                rateLimit,
                now));
    return new Created(new Credential(id, role, name, rateLimit, now, null, null), token);
  }

  /** Every credential, the revoked ones too (with the time of their revocation), oldest first. */
  List<Credential> list() {
    return database.read(
        tx ->
            tx.query(
                "SELECT " + COLUMNS + " FROM credentials ORDER BY created_at_ms, credential_id",
                Credentials::row));
  }

  /** Revokes {@code id}; false when no such credential is live (unknown or revoked before). */
  boolean revoke(String id) {
    long now = clock.millis();
    return database.inTransaction(
            tx ->
                tx.update(
                    "UPDATE credentials SET revoked_at_ms = ? WHERE credential_id = ?"
                        + " AND revoked_at_ms IS NULL",
                    now,
                    id))
        == 1;
  }

  /** The live credential whose token is {@code token}, read from the database now. */
  Optional<Credential> find(String token) {
    return database.read(
        tx ->
            tx.queryFirst(
                "SELECT "
                    + COLUMNS
                    + " FROM credentials WHERE token_sha256 = ? AND revoked_at_ms IS NULL",
                Credentials::row,
                sha256(token)));
  }

  /** Whether any credential is live: without one and without api.token, no write can pass. */
  boolean anyLive() {
    return database.read(
            tx -> tx.queryLong("SELECT COUNT(*) FROM credentials WHERE revoked_at_ms IS NULL"))
        > 0;
  }

  /** Records that {@code c} was used now, at most once per {@link #LAST_USED_EVERY}. */
  void used(Credential c) {
    long now = clock.millis();
    if (c.lastUsedAtMs() != null && now - c.lastUsedAtMs() < LAST_USED_EVERY.toMillis()) {
      return;
    }
    // Not awaited: the request does not wait for a bookkeeping write.
    database.inTransactionAsync(
        tx ->
            tx.update(
                "UPDATE credentials SET last_used_at_ms = ? WHERE credential_id = ?"
                    + " AND (last_used_at_ms IS NULL OR last_used_at_ms < ?)",
                now,
                c.id(),
                now));
  }

  static String sha256(String token) {
    return Sha256.hex(token);
  }

  private byte[] bytes(int n) {
    byte[] b = new byte[n];
    random.nextBytes(b);
    return b;
  }

  private static Credential row(ResultSet rs) throws SQLException {
    int rate = rs.getInt("rate_limit");
    Integer rateLimit = rs.wasNull() ? null : rate;
    long used = rs.getLong("last_used_at_ms");
    Long lastUsed = rs.wasNull() ? null : used;
    long revoked = rs.getLong("revoked_at_ms");
    Long revokedAt = rs.wasNull() ? null : revoked;
    return new Credential(
        rs.getString("credential_id"),
        Role.valueOf(rs.getString("role").toUpperCase(java.util.Locale.ROOT)),
        rs.getString("name"),
        rateLimit,
        rs.getLong("created_at_ms"),
        lastUsed,
        revokedAt);
  }
}
