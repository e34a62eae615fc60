package org.rhumbatron.router.causal;

import java.util.List;
import java.util.Map;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.testkit.http.LocalMessagesApi;
import org.rhumbatron.testkit.http.LocalMessagesApi.Answer;

/** The question, answers and settings the Clef-flash tests share. */
final class ClefFlashFixture {
  /** A key shaped like a real one, so a leak of it is easy to find in text. */
  static final String API_KEY = "sk-ant-api03-clefflashtestkey-7f3a9c1e5b";

  static final Map<String, String> ENVIRONMENT = Map.of("ANTHROPIC_API_KEY", API_KEY);

  private ClefFlashFixture() {}

  static ClefFlashQuestion question(String eventId) {
    return new ClefFlashQuestion(
        "proj_clef",
        "chg_1",
        "task_7",
        "Add VAT to invoices",
        eventId,
        EventType.INTENT_DECLARED,
        "src/billing/invoice.ts",
        "src/billing/");
  }

  /** The forced tool call with {@code decision} and {@code probability}. */
  static Answer routeWake(String decision, double probability) {
    return Answer.toolUse(
        AnthropicModelClient.TOOL,
        "{\"decision\":\"" + decision + "\",\"probability\":" + probability + "}");
  }

  /** The defaults, pointed at {@code api}, with {@code overrides}. */
  static Settings settings(LocalMessagesApi api, Map<String, String> overrides) {
    Map<String, String> all = new java.util.HashMap<>(overrides);
    all.putIfAbsent("causal.clef-flash-base-url", api.baseUrl());
    all.putIfAbsent("causal.clef-flash-timeout", "500ms");
    return Settings.defaults().with(all);
  }

  record Point(String name, double value, String labels, String project, String event) {}

  /** Every METRICS point, oldest first. */
  static List<Point> points(Database db) {
    return db.read(
        tx ->
            tx.query(
                "SELECT name, value, labels, project_id, event_id FROM platform_metrics"
                    + " WHERE binding = 'METRICS' ORDER BY id",
                rs ->
                    new Point(
                        rs.getString(1),
                        rs.getDouble(2),
                        rs.getString(3),
                        rs.getString(4),
                        rs.getString(5))));
  }

  static long callsOn(Database db, String day) {
    return db.read(
        tx ->
            tx.queryFirst(
                    "SELECT calls FROM clef_flash_calls WHERE day_utc = ?",
                    rs -> rs.getLong(1),
                    day)
                .orElse(0L));
  }
}
