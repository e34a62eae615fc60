package org.rhumbatron.agents;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.stream.Collectors;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.rhumbatron.platform.secrets.SigningKeys;
import org.rhumbatron.platform.secrets.SigningKeys.Key;
import org.rhumbatron.platform.secrets.SigningKeys.Purpose;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Signs webhook POSTs as the Standard Webhooks specification says: {@code webhook-id}, {@code
 * webhook-timestamp} (Unix seconds) and {@code webhook-signature}, a space-separated list of {@code
 * v1,<base64 HMAC-SHA256 of id.timestamp.body>}, one per unexpired secret, so a receiver that holds
 * either secret of a rotation accepts the call. The secrets are the webhook keys of {@link
 * SigningKeys}, read again at most every {@link #RELOAD_EVERY} (a rotation on another core is seen
 * that soon). Without any secret nothing is signed, and core says so once (WARN).
 */
public final class WebhookSignatures {
  public static final String ID = "webhook-id";
  public static final String TIMESTAMP = "webhook-timestamp";
  public static final String SIGNATURE = "webhook-signature";
  static final Duration RELOAD_EVERY = Duration.ofSeconds(2);

  private static final Logger log = LoggerFactory.getLogger(WebhookSignatures.class);

  private final SigningKeys keys;
  private final Clock clock;
  private final AtomicBoolean warned = new AtomicBoolean();
  private List<Key> secrets = List.of();
  private Instant loadedAt = Instant.MIN;

  public WebhookSignatures(SigningKeys keys, Clock clock) {
    this.keys = keys;
    this.clock = clock;
  }

  /**
   * Writes the three headers of {@code body} sent as message {@code messageId}; false when no
   * secret exists (the call goes unsigned).
   */
  public boolean sign(String messageId, String body, BiConsumer<String, String> header) {
    Instant now = clock.instant();
    List<Key> current = current(now);
    if (current.isEmpty()) {
      if (warned.compareAndSet(false, true)) {
        log.warn(
            "webhooks go unsigned: no webhook secret exists; make one with POST"
                + " /api/webhooks/secrets and give it to the Agents' side");
      }
      return false;
    }
    String timestamp = Long.toString(now.getEpochSecond());
    byte[] content = (messageId + "." + timestamp + "." + body).getBytes(StandardCharsets.UTF_8);
    header.accept(ID, messageId);
    header.accept(TIMESTAMP, timestamp);
    header.accept(
        SIGNATURE,
        current.stream()
            .map(k -> "v1," + hmac(k.secret(), content))
            .collect(Collectors.joining(" ")));
    return true;
  }

  private synchronized List<Key> current(Instant now) {
    if (!loadedAt.plus(RELOAD_EVERY).isAfter(now)) {
      secrets = keys.valid(Purpose.WEBHOOK);
      loadedAt = now;
    }
    return secrets.stream().filter(k -> k.validAt(now)).toList();
  }

  private static String hmac(byte[] secret, byte[] content) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret, "HmacSHA256"));
      return Base64.getEncoder().encodeToString(mac.doFinal(content));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
    }
  }
}
