package org.rhumbatron.lifecycle.tasks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.rhumbatron.platform.secrets.SigningKeys;
import org.rhumbatron.platform.secrets.SigningKeys.Key;
import org.rhumbatron.platform.secrets.SigningKeys.Purpose;

/**
 * Task tokens: {@code rtk_<claims>.<mac>}, where the claims are the base64url JSON array {@code
 * [keyId, taskId, attempt, agentId, expiresAtMs]} and the mac is HMAC-SHA256 of the claims' text
 * under key {@code keyId} of {@link SigningKeys} (purpose task-token). Any core checks a token with
 * the keys it holds in memory; it reads the table again only for a key it does not know (at most
 * once a second, so forged key ids cost no queries) and when the signing key is due.
 *
 * <p>The newest key signs; after {@code keyRotation} a new one is made and the old one keeps
 * checking for {@code maxAge}, the longest a token it signed can live.
 */
public final class TaskTokens {
  public static final String PREFIX = "rtk_";
  public static final Duration DEFAULT_MAX_AGE = Duration.ofHours(24);
  public static final Duration DEFAULT_KEY_ROTATION = Duration.ofDays(7);
  private static final Duration RELOAD_AT_MOST_EVERY = Duration.ofSeconds(1);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder B64D = Base64.getUrlDecoder();

  private final SigningKeys keys;
  private final Clock clock;
  private final Duration maxAge;
  private final Duration keyRotation;
  private volatile List<Key> known = List.of();
  private volatile Instant loadedAt = Instant.MIN;

  public TaskTokens(SigningKeys keys, Clock clock, Duration maxAge, Duration keyRotation) {
    this.keys = keys;
    this.clock = clock;
    this.maxAge = maxAge;
    this.keyRotation = keyRotation;
  }

  /** A token for the reports of {@code ref}, valid for the token max age at most. */
  public String issue(TaskRef ref) {
    Key key = signingKey();
    Instant expires = clock.instant().plus(maxAge);
    ArrayNode claims = JSON.createArrayNode();
    claims.add(key.keyId()).add(ref.taskId()).add(ref.attempt()).add(ref.agentId());
    claims.add(expires.toEpochMilli());
    String text = B64.encodeToString(claims.toString().getBytes(StandardCharsets.UTF_8));
    return PREFIX + text + "." + B64.encodeToString(mac(key, text));
  }

  /**
   * The claims of {@code token} when core signed it and it has not expired; empty for anything else
   * (malformed, unknown or expired key, wrong mac, past its expiry).
   */
  public Optional<TaskToken> verify(String token) {
    if (token == null || !token.startsWith(PREFIX)) {
      return Optional.empty();
    }
    int dot = token.indexOf('.', PREFIX.length());
    if (dot < 0) {
      return Optional.empty();
    }
    String text = token.substring(PREFIX.length(), dot);
    try {
      JsonNode claims = JSON.readTree(B64D.decode(text));
      if (!claims.isArray() || claims.size() != 5) {
        return Optional.empty();
      }
      Optional<Key> key = key(claims.get(0).asText());
      byte[] given = B64D.decode(token.substring(dot + 1));
      if (key.isEmpty() || !MessageDigest.isEqual(mac(key.get(), text), given)) {
        return Optional.empty();
      }
      Instant expires = Instant.ofEpochMilli(claims.get(4).asLong());
      if (!clock.instant().isBefore(expires)) {
        return Optional.empty();
      }
      return Optional.of(
          new TaskToken(
              claims.get(1).asText(), claims.get(2).asInt(), claims.get(3).asText(), expires));
    } catch (IllegalArgumentException | java.io.IOException e) {
      return Optional.empty(); // not base64 or not JSON: not a token of ours
    }
  }

  private synchronized Key signingKey() {
    Instant now = clock.instant();
    Key newest = known.isEmpty() ? null : known.get(0);
    if (newest == null || !newest.createdAt().plus(keyRotation).isAfter(now)) {
      reload(now);
      newest = known.isEmpty() ? null : known.get(0);
      if (newest == null || !newest.createdAt().plus(keyRotation).isAfter(now)) {
        keys.rotate(Purpose.TASK_TOKEN, maxAge);
        reload(now);
        newest = known.get(0);
      }
    }
    return newest;
  }

  private Optional<Key> key(String keyId) {
    Instant now = clock.instant();
    Optional<Key> key = find(keyId, now);
    if (key.isEmpty()) {
      synchronized (this) {
        key = find(keyId, now);
        if (key.isEmpty() && !loadedAt.plus(RELOAD_AT_MOST_EVERY).isAfter(now)) {
          reload(now);
          key = find(keyId, now);
        }
      }
    }
    return key;
  }

  private Optional<Key> find(String keyId, Instant now) {
    return known.stream().filter(k -> k.keyId().equals(keyId) && k.validAt(now)).findFirst();
  }

  private void reload(Instant now) {
    known = keys.valid(Purpose.TASK_TOKEN);
    loadedAt = now;
  }

  private static byte[] mac(Key key, String text) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key.secret(), "HmacSHA256"));
      return mac.doFinal(text.getBytes(StandardCharsets.US_ASCII));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
    }
  }
}
