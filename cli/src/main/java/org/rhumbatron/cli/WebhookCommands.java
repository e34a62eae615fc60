package org.rhumbatron.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/**
 * {@code rhumbatron webhooks secret-create|secrets|secret-revoke}: the secrets webhooks are signed
 * with. A new secret is printed once, the one time core shows it.
 */
@Command(
    name = "webhooks",
    mixinStandardHelpOptions = true,
    description = "The secrets core signs its webhooks with.")
final class WebhookCommands {
  private final Cli cli;

  WebhookCommands(Cli cli) {
    this.cli = cli;
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "secret-create",
      description =
          "Make a new secret (shown only now); the one before it still signs for the overlap.")
  void create(@Mixin Cli.Target t) {
    cli.print(
        t,
        cli.client(t).post("/api/webhooks/secrets", java.util.Map.of()),
        null,
        "keyId",
        "createdAt",
        "secret");
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "secrets",
      description = "The secrets in use: ids and times, never a secret.")
  void list(@Mixin Cli.Target t) {
    cli.print(
        t,
        cli.client(t).get("/api/webhooks/secrets"),
        "secrets",
        "keyId",
        "createdAt",
        "expiresAt");
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "secret-revoke",
      description = "Stop signing with a secret at once.")
  void revoke(@Mixin Cli.Target t, @Parameters(paramLabel = "KEY_ID") String keyId) {
    cli.print(t, cli.client(t).delete("/api/webhooks/secrets/" + keyId), null, "keyId", "revoked");
  }
}
