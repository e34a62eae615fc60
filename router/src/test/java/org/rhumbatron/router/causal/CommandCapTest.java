package org.rhumbatron.router.causal;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.DatabaseOptions;
import org.rhumbatron.platform.metrics.MetricsBinding;
import org.rhumbatron.platform.metrics.PlatformMetrics;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The seed's cap: 1,000 router commands per Change per UTC day; the 1,001st is dropped, logged and
 * counted; the day turns at 00:00 UTC; the count is in the database, so a restart keeps it.
 */
class CommandCapTest {
  @RegisterExtension static final NatsServerExtension nats = new NatsServerExtension();

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private CausalFixture c;

  @BeforeEach
  void start() throws Exception {
    c = new CausalFixture(nats.url(), db().url(), Map.of());
    c.f.clock.set(Instant.parse("2026-12-04T23:59:58Z"));
  }

  @AfterEach
  void close() {
    c.close();
  }

  /** {@code n} commands of Change A that count toward the cap (never sent, only counted). */
  private List<Command> counted(int n, CommandType type) {
    List<Command> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(
          Command.builder()
              .commandId("cmd_fill_" + type.name().toLowerCase() + "_" + i)
              .commandType(type)
              .projectId(CausalFixture.P)
              .changeId(c.changeA.changeId())
              .taskId(type == CommandType.AGENT_WAKE ? c.tasks.get("api").taskId() : null)
              .createdAt(c.f.clock.instant())
              .payload(JsonNodeFactory.instance.objectNode())
              .build());
    }
    return out;
  }

  private long dropped() {
    return c.f.count(
        "SELECT COUNT(*) FROM platform_metrics WHERE binding = 'METRICS' AND name = ?",
        CommandCap.DROPPED);
  }

  private long count(CommandCap cap) {
    return c.f.database.read(tx -> cap.countToday(tx, c.changeA.changeId()));
  }

  private Event exactOnApi() {
    return c.resourceEvent(EventType.INTENT_DECLARED, "path:src/api/", "other");
  }

  @DatabaseTest
  void theThousandthCommandGoesTheThousandAndFirstIsDroppedAndTheDayTurnsAtMidnightUtc() {
    CommandCap cap = c.cap(1_000);
    // Each route below is a new wake of api: no hold-back while the one before waits unhandled.
    CausalRules rules = c.rules((e, m) -> null, cap, java.time.Duration.ZERO);
    // 999 of the four counted types, by the cap alone.
    List<Command> fill = new ArrayList<>();
    fill.addAll(counted(333, CommandType.CHANGE_DISPATCH));
    fill.addAll(counted(333, CommandType.CANDIDATE_CREATE));
    fill.addAll(counted(333, CommandType.CHANGE_SETTLE));
    List<Command> admitted = c.f.database.inTransaction(tx -> cap.admit(tx, fill));
    assertThat(admitted).hasSize(999);
    // index.build and candidates.recompose do not count.
    List<Command> free = new ArrayList<>(counted(5, CommandType.INDEX_BUILD));
    free.addAll(counted(5, CommandType.CANDIDATES_RECOMPOSE));
    List<Command> uncounted = c.f.database.inTransaction(tx -> cap.admit(tx, free));
    assertThat(uncounted).hasSize(10);

    c.route(rules, List.of(exactOnApi()));
    assertThat(c.sentAsText()).as("the 1,000th").containsExactly("agent.wake api");
    assertThat(dropped()).isZero();

    c.route(rules, List.of(exactOnApi()));
    assertThat(c.sent).as("the 1,001st is dropped").hasSize(1);
    assertThat(dropped()).isEqualTo(1);
    assertThat(count(cap)).isEqualTo(1_000);
    // Another Change has its own count.
    c.route(rules, List.of(c.resourceEvent(EventType.INTENT_DECLARED, "path:other/", "api")));
    assertThat(c.sentAsText()).endsWith("agent.wake other");

    c.f.clock.set(Instant.parse("2026-12-04T23:59:59.999Z"));
    c.route(rules, List.of(exactOnApi()));
    assertThat(dropped()).as("still the same UTC day").isEqualTo(2);

    c.f.clock.set(Instant.parse("2026-12-05T00:00:00Z"));
    c.route(rules, List.of(exactOnApi()));
    assertThat(c.sentAsText()).endsWith("agent.wake api");
    assertThat(c.sent).hasSize(3);
    assertThat(dropped()).isEqualTo(2);
    assertThat(count(cap)).isEqualTo(1);
  }

  @DatabaseTest
  void theCountSurvivesARestart() {
    CommandCap cap = c.cap(1_000);
    c.f.database.inTransaction(tx -> cap.admit(tx, counted(1_000, CommandType.AGENT_WAKE)));
    // A new core: a new cap over the same database, opened again.
    try (Database again =
        Database.open(db().url(), DatabaseOptions.builder().clock(c.f.clock).build())) {
      CommandCap restarted =
          new CommandCap(
              1_000, c.f.clock, new PlatformMetrics(again, c.f.clock, MetricsBinding.METRICS));
      long counted = again.read(tx -> restarted.countToday(tx, c.changeA.changeId()));
      assertThat(counted).isEqualTo(1_000);
      List<Command> after =
          again.inTransaction(tx -> restarted.admit(tx, counted(1, CommandType.AGENT_WAKE)));
      assertThat(after).isEmpty();
    }
    assertThat(dropped()).isEqualTo(1);
  }
}
