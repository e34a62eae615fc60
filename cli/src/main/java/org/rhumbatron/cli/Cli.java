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
  static final String CACERT_ENV = "RHUMBATRON_CACERT";
  static final String DEFAULT_URL = "http://127.0.0.1:8080";

  private final Map<String, String> env;
  private final CommandLine root;

  private Cli(Map<String, String> env, CommandLine root) {
    this.env = env;
    this.root = root;
  }

  /**
   * Adds {@code projects}, {@code changes}, {@code dead-letters}, {@code outbox}, {@code streams},
   * {@code tokens}, {@code webhooks}.
   */
  public static void addTo(CommandLine root, Map<String, String> env) {
    Cli cli = new Cli(env, root);
    root.addSubcommand(new CommandLine(new ProjectCommands(cli)));
    root.addSubcommand(new CommandLine(new ChangeCommands(cli)));
    root.addSubcommand(new CommandLine(new DeadLetterCommands(cli)));
    root.addSubcommand(new CommandLine(new OutboxCommands(cli)));
    root.addSubcommand(new CommandLine(new StreamCommands(cli)));
    root.addSubcommand(new CommandLine(new TokenCommands(cli)));
    root.addSubcommand(new CommandLine(new WebhookCommands(cli)));
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

    @Option(
        names = "--cacert",
        description =
            "PEM file of the CA that signed core's TLS certificate (default: $RHUMBATRON_CACERT,"
                + " else the system's trusted CAs).")
    Path cacert;

    @Option(names = "--json", description = "Print the API's JSON answer as is.")
    boolean json;
  }

  CoreClient client(Target target) {
    String url = target.url != null ? target.url : env.getOrDefault(URL_ENV, DEFAULT_URL);
    Path cacert = target.cacert;
    if (cacert == null && env.get(CACERT_ENV) != null && !env.get(CACERT_ENV).isBlank()) {
      cacert = Path.of(env.get(CACERT_ENV).strip());
    }
    return new CoreClient(url, token(target), cacert == null ? null : TrustedCa.context(cacert));
  }

  PrintWriter out() {
    return root.getOut();
  }

  PrintWriter err() {
    return root.getErr();
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
      List<Line> lines = new ArrayList<>();
      lines.add(header(columns));
      for (JsonNode row : rows) {
        lines.add(line(row, columns));
      }
      int[] widths = new int[columns.length];
      for (Line line : lines) {
        for (int i = 0; i < columns.length; i++) {
          widths[i] = Math.max(widths[i], line.cell(i).length());
        }
      }
      StringBuilder out = new StringBuilder();
      for (Line line : lines) {
        out.append(line.format(widths)).append('\n');
      }
      return out.toString();
    }

    /** One printed line: a cell per column. */
    private record Line(List<String> cells) {
      String cell(int i) {
        return cells.get(i);
      }

      /** Each cell padded to its column's width but the last; no trailing blanks. */
      String format(int[] widths) {
        StringBuilder l = new StringBuilder();
        int last = cells.size() - 1;
        for (int i = 0; i < cells.size(); i++) {
          l.append(i == last ? cell(i) : String.format("%-" + widths[i] + "s  ", cell(i)));
        }
        return l.toString().stripTrailing();
      }
    }

    private static Line header(String... columns) {
      List<String> cells = new ArrayList<>();
      for (String column : columns) {
        String name = column.substring(column.lastIndexOf('.') + 1);
        cells.add(name.toUpperCase(java.util.Locale.ROOT));
      }
      return new Line(cells);
    }

    private static Line line(JsonNode row, String... columns) {
      List<String> cells = new ArrayList<>();
      for (String column : columns) {
        JsonNode v = row;
        for (String step : column.split("\\.")) {
          v = v.path(step);
        }
        cells.add(
            v.isMissingNode() || v.isNull() ? "-" : v.isValueNode() ? v.asText() : v.toString());
      }
      return new Line(cells);
    }
  }
}
