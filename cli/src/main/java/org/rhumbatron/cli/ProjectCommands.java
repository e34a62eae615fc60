package org.rhumbatron.cli;

import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code rhumbatron projects list|show|provision|archive|delete}. */
@Command(
    name = "projects",
    mixinStandardHelpOptions = true,
    description = "Read and manage Projects.")
final class ProjectCommands {
  private static final String[] COLUMNS = {
    "projectId", "tenantId", "name", "status", "canonicalGeneration", "hasLiveApp"
  };
  private final Cli cli;

  ProjectCommands(Cli cli) {
    this.cli = cli;
  }

  @Command(mixinStandardHelpOptions = true, name = "list", description = "Projects in id order.")
  void list(
      @Mixin Cli.Target t,
      @Option(names = "--status", description = "active, archived or deleted") String status,
      @Option(names = "--limit", description = "at most this many (1 to 1000)") Integer limit) {
    StringBuilder query = new StringBuilder();
    if (status != null) {
      query.append("status=").append(status);
    }
    if (limit != null) {
      query.append(query.length() == 0 ? "" : "&").append("limit=").append(limit);
    }
    String path = "/api/projects" + (query.length() == 0 ? "" : "?" + query);
    cli.print(t, cli.client(t).get(path), "projects", COLUMNS);
  }

  @Command(mixinStandardHelpOptions = true, name = "show", description = "One Project.")
  void show(@Mixin Cli.Target t, @Parameters(paramLabel = "ID") String id) {
    cli.print(t, cli.client(t).get("/api/projects/" + id), null, COLUMNS);
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "provision",
      description = "Provision a Project (a no-op if it exists).")
  void provision(
      @Mixin Cli.Target t,
      @Parameters(paramLabel = "ID") String id,
      @Option(names = "--tenant", required = true) String tenant,
      @Option(names = "--name", required = true) String name) {
    CoreClient.Answer a =
        cli.client(t)
            .post("/api/projects", Map.of("projectId", id, "tenantId", tenant, "name", name));
    // 202 with the command sent, or 200 with the Project when it exists already.
    cli.print(t, a, null, "projectId", "commandId", "queue", "duplicate", "project.status");
  }

  @Command(mixinStandardHelpOptions = true, name = "archive", description = "Archive a Project.")
  void archive(@Mixin Cli.Target t, @Parameters(paramLabel = "ID") String id) {
    cli.print(t, cli.client(t).post("/api/projects/" + id + "/archive", Map.of()), null, CHANGED);
  }

  @Command(mixinStandardHelpOptions = true, name = "delete", description = "Delete a Project.")
  void delete(@Mixin Cli.Target t, @Parameters(paramLabel = "ID") String id) {
    cli.print(t, cli.client(t).delete("/api/projects/" + id), null, CHANGED);
  }

  private static final String[] CHANGED = {"project.projectId", "project.status", "changed"};
}
