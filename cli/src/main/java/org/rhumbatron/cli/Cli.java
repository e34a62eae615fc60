package org.rhumbatron.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * Registers the API subcommands on {@code bin/rhumbatron}. Each group is one instance that holds
 * the environment, so tests pass their own URL and token without touching the process's.
 */
public final class Cli {
  static final String URL_ENV = "RHUMBATRON_URL";
  static final String TOKEN_ENV = "RHUMBATRON_API_TOKEN";
  static final String DEFAULT_URL = "http://127.0.0.1:8080";

  private final Map<String, String> env;
  private final CommandLine root;

  private Cli(Map<String, String> env, CommandLine root) {
    this.env = env;
    this.root = root;
  }

  /**
   * Adds {@code projects}, {@code changes}, {@code dead-letters}, {@code outbox}, {@code streams}.
   */
  public static void addTo(CommandLine root, Map<String, String> env) {
    Cli cli = new Cli(env, root);
    root.addSubcommand(new CommandLine(new ProjectCommands(cli)));
    root.addSubcommand(new CommandLine(new ChangeCommands(cli)));
    root.addSubcommand(new CommandLine(new DeadLetterCommands(cli)));
    root.addSubcommand(new CommandLine(new OutboxCommands(cli)));
    root.addSubcommand(new CommandLine(new StreamCommands(cli)));
  }

  /** The options every API subcommand takes. */
  public static final class Target {
    @Option(
        names = "--url",
        description = "Core's HTTP address (default: $RHUMBATRON_URL or " + DEFAULT_URL + ").")
    String url;

    @Option(
        names = "--token-file",
        description = "File holding the API token (default: $RHUMBATRON_API_TOKEN).")
    Path tokenFile;

    @Option(names = "--json", description = "Print the API's JSON answer as is.")
    boolean json;
  }

  CoreClient client(Target target) {
    String url = target.url != null ? target.url : env.getOrDefault(URL_ENV, DEFAULT_URL);
    return new CoreClient(url, token(target));
  }

  private String token(Target target) {
    if (target.tokenFile == null) {
      String fromEnv = env.get(TOKEN_ENV);
      return fromEnv == null || fromEnv.isBlank() ? null : fromEnv.strip();
    }
    return readFile("--token-file", target.tokenFile).strip();
  }

  /** Prints the answer: its JSON text, or the rows of {@code rowsField} as a table. */
  void print(Target target, CoreClient.Answer answer, String rowsField, String... columns) {
    PrintWriter out = root.getOut();
    if (target.json) {
      out.println(answer.text().strip());
    } else {
      JsonNode rows = rowsField == null ? answer.json() : answer.json().path(rowsField);
      out.print(Table.of(rows.isArray() ? rows : List.of(rows), columns));
    }
    out.flush();
  }

  /** Reads a file the user named; a missing or unreadable one is a usage error (exit 2). */
  static String readFile(String option, Path file) {
    try {
      return Files.readString(file);
    } catch (NoSuchFileException e) {
      throw new CliException(CliException.USAGE, option + " " + file + ": no such file");
    } catch (AccessDeniedException e) {
      throw new CliException(CliException.USAGE, option + " " + file + ": not readable");
    } catch (IOException e) {
      String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
      throw new CliException(CliException.USAGE, "cannot read " + option + " " + file + ": " + why);
    }
  }

  /**
   * Plain text columns, left aligned; a missing or null value prints as "-". A column "a.b" is
   * field b of object a, headed B.
   */
  static final class Table {
    private Table() {}

    static String of(Iterable<JsonNode> rows, String... columns) {
      List<String[]> lines = new ArrayList<>();
      String[] header = new String[columns.length];
      for (int i = 0; i < columns.length; i++) {
        String name = columns[i].substring(columns[i].lastIndexOf('.') + 1);
        header[i] = name.toUpperCase(java.util.Locale.ROOT);
      }
      lines.add(header);
      for (JsonNode row : rows) {
        String[] line = new String[columns.length];
        for (int i = 0; i < columns.length; i++) {
          JsonNode v = row;
          for (String step : columns[i].split("\\.")) {
            v = v.path(step);
          }
          line[i] =
              v.isMissingNode() || v.isNull() ? "-" : v.isValueNode() ? v.asText() : v.toString();
        }
        lines.add(line);
      }
      int[] widths = new int[columns.length];
      for (String[] line : lines) {
        for (int i = 0; i < line.length; i++) {
          widths[i] = Math.max(widths[i], line[i].length());
        }
      }
      StringBuilder out = new StringBuilder();
      for (String[] line : lines) {
        StringBuilder l = new StringBuilder();
        for (int i = 0; i < line.length; i++) {
          l.append(
              i == line.length - 1 ? line[i] : String.format("%-" + widths[i] + "s  ", line[i]));
        }
        out.append(l.toString().stripTrailing()).append('\n');
      }
      return out.toString();
    }
  }
}
