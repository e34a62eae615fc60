package org.rhumbatron.cli;

import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code rhumbatron tokens create|list|revoke}: the API's credentials, an operator's to manage. */
@Command(
    name = "tokens",
    mixinStandardHelpOptions = true,
    description = "Create, list and revoke API credentials (operator, reader, agent).")
final class TokenCommands {
  private static final String[] COLUMNS = {
    "id", "role", "name", "rateLimit", "createdAt", "lastUsedAt", "revokedAt"
  };
  private final Cli cli;

  TokenCommands(Cli cli) {
    this.cli = cli;
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "create",
      description =
          "Create a credential; its token is printed now and never again (core keeps a hash).")
  void create(
      @Mixin Cli.Target t,
      @Option(names = "--role", required = true, description = "operator, reader or agent")
          String role,
      @Option(names = "--name", required = true, description = "Who holds it, e.g. grafana")
          String name,
      @Option(names = "--rate", description = "Requests per second (default api.rate-limit)")
          Integer rate) {
    java.util.Map<String, Object> body = new java.util.LinkedHashMap<>();
    body.put("role", role);
    body.put("name", name);
    if (rate != null) {
      body.put("rateLimit", rate);
    }
    CoreClient.Answer created = cli.client(t).post("/api/tokens", body);
    if (t.json) {
      cli.print(t, created, null);
      return;
    }
    PrintWriter out = cli.out();
    out.println(created.json().path("token").asText());
    out.flush();
    PrintWriter err = cli.err();
    err.println(
        "credential "
            + created.json().path("id").asText()
            + " ("
            + role
            + ", "
            + name
            + "): the token above is shown this once; store it now");
    err.flush();
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "list",
      description = "Every credential, revoked ones too; never their tokens.")
  void list(@Mixin Cli.Target t) {
    cli.print(t, cli.client(t).get("/api/tokens"), "tokens", COLUMNS);
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "revoke",
      description = "Revoke a credential: refused from its next request on, on every core.")
  void revoke(@Mixin Cli.Target t, @Parameters(paramLabel = "ID") String id) {
    cli.print(t, cli.client(t).delete("/api/tokens/" + id), null, "id", "revoked");
  }
}
