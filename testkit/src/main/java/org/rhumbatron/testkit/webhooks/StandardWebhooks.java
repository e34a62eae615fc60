package org.rhumbatron.testkit.webhooks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Verifies webhook calls the way a receiver would, without core's code: {@link #verifyFromSpec}
 * follows the specification's text step by step; {@link #verifyWithNode} hands the calls to the npm
 * package {@code standardwebhooks} (installed under {@code target/} on first use).
 */
public final class StandardWebhooks {
  /** The specification's default tolerance for the timestamp, either way. */
  public static final Duration TOLERANCE = Duration.ofMinutes(5);

  private static final String NODE_SCRIPT =
      String.join(
          "\n",
          "const { Webhook } = require('standardwebhooks');",
          "const text = require('fs').readFileSync(0, 'utf8');",
          "for (const line of text.split('\\n').filter(Boolean)) {",
          "  const [secret, id, ts, sig, body] =",
          "    line.split('\\t').map(x => Buffer.from(x, 'base64').toString('utf8'));",
          "  try {",
          "    new Webhook(secret).verify(body,",
          "      {'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': sig});",
          "    console.log('ok');",
          "  } catch (e) { console.log('fail: ' + e.message); }",
          "}",
          "");

  /** One received call: its three headers and its body as sent. */
  public record Message(String id, String timestamp, String signature, String body) {}

  private StandardWebhooks() {}

  /**
   * The specification's steps: the secret is base64 after {@code whsec_}; the signed content is
   * {@code id.timestamp.body}; HMAC-SHA256, base64; the header lists {@code v1,<sig>} entries
   * separated by spaces and one matching entry suffices; the timestamp is within the tolerance.
   */
  public static boolean verifyFromSpec(String secret, Message message, Instant now) {
    if (!secret.startsWith("whsec_")
        || message.id() == null
        || message.timestamp() == null
        || message.signature() == null) {
      return false;
    }
    long sent;
    try {
      sent = Long.parseLong(message.timestamp());
    } catch (NumberFormatException e) {
      return false;
    }
    if (Math.abs(now.getEpochSecond() - sent) > TOLERANCE.toSeconds()) {
      return false;
    }
    byte[] key = Base64.getDecoder().decode(secret.substring("whsec_".length()));
    String content = message.id() + "." + message.timestamp() + "." + message.body();
    byte[] expected;
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      expected = mac.doFinal(content.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
    for (String entry : message.signature().split(" ")) {
      int comma = entry.indexOf(',');
      if (comma < 0 || !entry.substring(0, comma).equals("v1")) {
        continue;
      }
      byte[] given;
      try {
        given = Base64.getDecoder().decode(entry.substring(comma + 1));
      } catch (IllegalArgumentException e) {
        continue;
      }
      if (MessageDigest.isEqual(expected, given)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Each message checked by the npm package under node with {@code secret}: "ok" or "fail: why", in
   * order; empty when node or the package cannot be had here (no node, no registry).
   */
  public static Optional<List<String>> verifyWithNode(String secret, List<Message> messages)
      throws IOException, InterruptedException {
    Path dir = Path.of("target", "standardwebhooks-npm").toAbsolutePath();
    if (!Files.isDirectory(dir.resolve("node_modules/standardwebhooks"))) {
      Files.createDirectories(dir);
      if (run(
              dir,
              null,
              "npm",
              "install",
              "--no-audit",
              "--no-fund",
              "--prefix",
              dir.toString(),
              "standardwebhooks@1.3.0")
          .isEmpty()) {
        return Optional.empty();
      }
    }
    Path script = dir.resolve("verify.js");
    Files.writeString(script, NODE_SCRIPT);
    StringBuilder input = new StringBuilder();
    Base64.Encoder b64 = Base64.getEncoder();
    for (Message m : messages) {
      List<String> fields = List.of(secret, m.id(), m.timestamp(), m.signature(), m.body());
      List<String> encoded = new ArrayList<>();
      fields.forEach(f -> encoded.add(b64.encodeToString(f.getBytes(StandardCharsets.UTF_8))));
      input.append(String.join("\t", encoded)).append('\n');
    }
    return run(dir, input.toString(), "node", script.toString()).map(out -> out.lines().toList());
  }

  private static Optional<String> run(Path dir, String input, String... command)
      throws IOException, InterruptedException {
    Process process;
    try {
      process =
          new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    } catch (IOException e) {
      return Optional.empty(); // no such program here
    }
    if (input != null) {
      process.getOutputStream().write(input.getBytes(StandardCharsets.UTF_8));
    }
    process.getOutputStream().close();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0) {
      process.destroyForcibly();
      return Optional.empty();
    }
    return Optional.of(out);
  }
}
