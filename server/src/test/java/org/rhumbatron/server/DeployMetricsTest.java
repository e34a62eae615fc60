package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The Grafana dashboard and the Prometheus alerts under {@code deploy/} name only metrics and
 * labels a running core serves on {@code GET /metrics}, and the rules pass {@code promtool check
 * rules}.
 */
class DeployMetricsTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.sqlite();
  @TempDir Path data;

  static final Path ROOT = repositoryRoot();
  static final Path DASHBOARD = ROOT.resolve("deploy/grafana/rhumbatron.json");
  static final Path ALERTS = ROOT.resolve("deploy/prometheus/alerts.yml");

  /** Series Prometheus writes itself for every scrape target, not core. */
  private static final Set<String> SCRAPE_SERIES = Set.of("up");

  /** Labels Prometheus attaches to every series it scrapes. */
  private static final Set<String> TARGET_LABELS = Set.of("job", "instance");

  private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "inf", "nan");
  private static final Pattern STRING = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|'[^']*'");
  private static final Pattern SELECTOR =
      Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)?\\s*\\{([^}]*)}");
  private static final Pattern MATCHER = Pattern.compile("(\\w+)\\s*(?:=~|!~|!=|=)");
  private static final Pattern GROUPING =
      Pattern.compile("\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\(([^)]*)\\)");
  private static final Pattern LABEL_VALUES =
      Pattern.compile("label_values\\(\\s*([^,()]*?)\\s*,\\s*\\w+\\s*\\)");
  private static final Pattern IDENTIFIER =
      Pattern.compile("(?<![\\w$])[a-zA-Z_:][a-zA-Z0-9_:]*+(?!\\s*\\()");
  private static final Pattern EXPR_LINE = Pattern.compile("^\\s*expr:\\s*(.*)$");
  private static final Pattern ALERT_LINE = Pattern.compile("^\\s*- alert:");

  /** What one PromQL expression refers to. */
  record Refs(Set<String> metrics, Map<String, Set<String>> matched, Set<String> grouped) {}

  /** The metric names, selector labels per metric and grouping labels of {@code expr}. */
  static Refs refs(String expr) {
    String e = LABEL_VALUES.matcher(expr).replaceAll("$1");
    e = STRING.matcher(e).replaceAll("\"\"");
    Map<String, Set<String>> matched = new HashMap<>();
    Matcher s = SELECTOR.matcher(e);
    while (s.find()) {
      Set<String> labels = new HashSet<>();
      Matcher m = MATCHER.matcher(s.group(2));
      while (m.find()) {
        labels.add(m.group(1));
      }
      String name = s.group(1) != null ? s.group(1) : "";
      labels.remove("__name__");
      matched.computeIfAbsent(name, k -> new HashSet<>()).addAll(labels);
    }
    e = SELECTOR.matcher(e).replaceAll("$1 ");
    Set<String> grouped = new HashSet<>();
    Matcher g = GROUPING.matcher(e);
    while (g.find()) {
      for (String label : g.group(1).split(",")) {
        if (!label.isBlank()) {
          grouped.add(label.strip());
        }
      }
    }
    e = GROUPING.matcher(e).replaceAll(" ");
    // ranges, offsets and Grafana's $variables are no names
    e = e.replaceAll("\\[[^\\]]*]", " ").replaceAll("\\boffset\\s+\\w+", " ");
    e = e.replaceAll("\\$\\{?\\w+}?", " ");
    Set<String> metrics = new TreeSet<>();
    Matcher i = IDENTIFIER.matcher(e);
    while (i.find()) {
      if (!KEYWORDS.contains(i.group().toLowerCase())) {
        metrics.add(i.group());
      }
    }
    return new Refs(metrics, matched, grouped);
  }

  /** The PromQL of the dashboard's panels and query variables, by where it sits. */
  static Map<String, String> dashboardExpressions(Path file) throws Exception {
    JsonNode root = new ObjectMapper().readTree(file.toFile());
    Map<String, String> out = new HashMap<>();
    collectExprs(root.path("panels"), "panels", out);
    for (JsonNode variable : root.path("templating").path("list")) {
      if (variable.path("type").asText().equals("query")) {
        JsonNode query = variable.path("query");
        String text = query.isTextual() ? query.asText() : query.path("query").asText();
        out.put("variable " + variable.path("name").asText(), text);
      }
    }
    return out;
  }

  private static void collectExprs(JsonNode node, String where, Map<String, String> out) {
    if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        collectExprs(node.get(i), where + "[" + i + "]", out);
      }
    } else if (node.isObject()) {
      String title = node.path("title").asText("");
      String here = title.isEmpty() ? where : where + " '" + title + "'";
      node.fields()
          .forEachRemaining(
              f -> {
                if (f.getKey().equals("expr")) {
                  out.put(here, f.getValue().asText());
                } else {
                  collectExprs(f.getValue(), here + "." + f.getKey(), out);
                }
              });
    }
  }

  /** The expr of every rule; each must sit on its own line, which the rule count checks. */
  static Map<String, String> ruleExpressions(Path file) throws Exception {
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    Map<String, String> out = new HashMap<>();
    int rules = 0;
    for (int n = 0; n < lines.size(); n++) {
      if (ALERT_LINE.matcher(lines.get(n)).find()) {
        rules++;
      }
      Matcher m = EXPR_LINE.matcher(lines.get(n));
      if (m.matches()) {
        String expr = m.group(1).strip();
        assertThat(expr).as("%s:%d expr on one line", file, n + 1).doesNotMatch("^[|>].*");
        if (expr.length() > 1 && (expr.startsWith("\"") || expr.startsWith("'"))) {
          expr = expr.substring(1, expr.length() - 1);
        }
        out.put(file.getFileName() + ":" + (n + 1), expr);
      }
    }
    assertThat(out).as("one expr line per alert in %s", file).hasSize(rules);
    return out;
  }

  /** Each served sample name with the label names its series carry. */
  private static Map<String, Set<String>> served(String exposition) {
    Map<String, Set<String>> out = new HashMap<>();
    Map<String, String> types = new HashMap<>();
    for (String line : exposition.split("\n")) {
      if (line.startsWith("# TYPE ")) {
        String[] parts = line.split(" ");
        types.put(parts[2], parts[3]);
      }
    }
    for (CoreMetricsTest.Series s : CoreMetricsTest.parse(exposition)) {
      out.computeIfAbsent(s.name(), k -> new HashSet<>()).addAll(s.labels().keySet());
    }
    // A histogram or summary serves its _bucket, _sum and _count samples once it has any.
    types.forEach(
        (name, type) -> {
          if (type.equals("histogram") || type.equals("summary")) {
            for (String suffix : List.of("_bucket", "_sum", "_count")) {
              out.putIfAbsent(name + suffix, new HashSet<>(Set.of("le", "quantile")));
            }
          }
        });
    return out;
  }

  /** Every problem of {@code exprs} against what core serves; empty when all is served. */
  static List<String> unserved(Map<String, String> exprs, Map<String, Set<String>> served) {
    List<String> problems = new ArrayList<>();
    exprs.forEach(
        (where, expr) -> {
          Refs refs = refs(expr);
          if (refs.metrics().isEmpty()) {
            problems.add(where + ": names no metric: " + expr);
          }
          Set<String> labels = new HashSet<>(TARGET_LABELS);
          for (String metric : refs.metrics()) {
            if (SCRAPE_SERIES.contains(metric)) {
              continue;
            }
            if (!served.containsKey(metric)) {
              problems.add(where + ": core serves no " + metric);
              continue;
            }
            labels.addAll(served.get(metric));
            Set<String> matched = new TreeSet<>(refs.matched().getOrDefault(metric, Set.of()));
            matched.removeAll(served.get(metric));
            matched.removeAll(TARGET_LABELS);
            if (!matched.isEmpty()) {
              problems.add(where + ": " + metric + " has no label " + matched);
            }
          }
          Set<String> grouped = new TreeSet<>(refs.grouped());
          grouped.removeAll(labels);
          if (!grouped.isEmpty()) {
            problems.add(where + ": groups by labels no metric of it has " + grouped);
          }
        });
    return problems;
  }

  @Test
  void theParserPicksMetricsAndLabelsOutOfPromQl() {
    Refs refs =
        refs(
            "sum by (queue) (rate(rhumbatron_queue_retries_total{instance=~\"$instance\","
                + " queue!=\"x y\"}[$__rate_interval])) > 0 and on(instance) up{job=\"r\"} == 0"
                + " or label_values(jvm_threads_live_threads, instance)");
    assertThat(refs.metrics())
        .containsExactlyInAnyOrder(
            "rhumbatron_queue_retries_total", "up", "jvm_threads_live_threads");
    assertThat(refs.matched().get("rhumbatron_queue_retries_total"))
        .containsExactlyInAnyOrder("instance", "queue");
    assertThat(refs.grouped()).containsExactlyInAnyOrder("queue", "instance");
  }

  @Test
  void everyMetricTheDashboardAndAlertsNameIsOneCoreServes() throws Exception {
    Map<String, String> dashboard = dashboardExpressions(DASHBOARD);
    Map<String, String> alerts = ruleExpressions(ALERTS);
    assertThat(dashboard).hasSizeGreaterThan(20);
    assertThat(alerts).hasSizeGreaterThanOrEqualTo(8);
    Settings settings = Settings.defaults().with(Map.of("agents.simulated.step-delay", "5ms"));
    try (CoreService core =
        CoreService.start(
            new CoreConfig(nats.url(), data, database.database().url(), 0, settings))) {
      HttpResponse<String> response =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(
                          URI.create("http://127.0.0.1:" + core.httpPort() + "/metrics"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).isEqualTo(200);
      Map<String, Set<String>> served = served(response.body());
      assertThat(unserved(dashboard, served)).as("%s", DASHBOARD).isEmpty();
      assertThat(unserved(alerts, served)).as("%s", ALERTS).isEmpty();
      // The alerts the deploy notes promise are there.
      Set<String> alerted = new TreeSet<>();
      alerts.values().forEach(e -> alerted.addAll(refs(e).metrics()));
      assertThat(alerted)
          .contains(
              "rhumbatron_outbox_failed",
              "rhumbatron_outbox_backlog",
              "rhumbatron_consumer_lag",
              "rhumbatron_consumer_oldest_unread_age_seconds",
              "rhumbatron_dead_letters_open",
              "rhumbatron_nats_connected",
              "up");
    }
  }

  @Test
  void theAlertRulesPassPromtool() throws Exception {
    Result result = promtool(ALERTS);
    assertThat(result.exit()).as(result.output()).isZero();
    assertThat(result.output()).contains("SUCCESS");
  }

  /** The check runs for real: promtool refuses a rule whose expression does not parse. */
  @Test
  void promtoolRefusesABrokenRule() throws Exception {
    Path broken = data.resolve("broken.yml");
    Files.writeString(
        broken,
        Files.readString(ALERTS)
            .replaceFirst(
                "expr: max by \\(instance\\) \\(rhumbatron_outbox_failed\\) > 0",
                "expr: max by (instance) (rhumbatron_outbox_failed > 0"));
    assertThat(Files.readString(broken)).isNotEqualTo(Files.readString(ALERTS));
    Result result = promtool(broken);
    assertThat(result.exit()).as(result.output()).isNotZero();
  }

  record Result(int exit, String output) {}

  private static Result promtool(Path rules) throws Exception {
    Process p =
        new ProcessBuilder(promtoolPath(), "check", "rules", rules.toString())
            .redirectErrorStream(true)
            .start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("promtool ends").isTrue();
    return new Result(p.exitValue(), output);
  }

  private static String promtoolPath() {
    List<String> dirs =
        new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(":")));
    dirs.add("/usr/bin");
    for (String dir : dirs) {
      File f = new File(dir, "promtool");
      if (!dir.isEmpty() && f.canExecute()) {
        return f.getPath();
      }
    }
    return fail(
        "promtool is missing: run bin/setup test (it installs the Debian package prometheus)");
  }

  private static Path repositoryRoot() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isDirectory(p.resolve("deploy")) && Files.exists(p.resolve("bin/setup"))) {
        return p;
      }
    }
    throw new IllegalStateException("no deploy/ above " + Path.of("").toAbsolutePath());
  }
}
