package org.rhumbatron.router.causal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.rhumbatron.router.causal.ClefFlashFixture.ENVIRONMENT;
import static org.rhumbatron.router.causal.ClefFlashFixture.callsOn;
import static org.rhumbatron.router.causal.ClefFlashFixture.question;
import static org.rhumbatron.router.causal.ClefFlashFixture.routeWake;
import static org.rhumbatron.router.causal.ClefFlashFixture.settings;

import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.router.causal.ModelRoute.Reason;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.http.LocalMessagesApi;

/** Clef-flash's daily budget in clef_flash_calls; run against SQLite and PostgreSQL. */
class ClefFlashBudgetTest {
  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private final SettableClock clock = new SettableClock(Instant.parse("2026-03-04T23:59:59.998Z"));
  private LocalMessagesApi api;

  @BeforeEach
  void start() {
    api = LocalMessagesApi.start().answerWith(req -> routeWake("skip", 0.9));
  }

  @AfterEach
  void stop() {
    api.close();
  }

  private ClefFlash flash(Database db, int callsPerDay) {
    return ClefFlash.create(
        db,
        settings(api, Map.of("causal.clef-flash-calls-per-day", Integer.toString(callsPerDay))),
        ENVIRONMENT,
        clock);
  }

  @DatabaseTest
  void theCapHoldsAcrossARestartAndRollsAtMidnightUtc() {
    try (Database db = Database.open(db().url());
        ClefFlash flash = flash(db, 2)) {
      assertThat(flash.route(question("e1")).reason()).isEqualTo(Reason.MODEL);
    }
    // A new ClefFlash over the same database: the first call of the day is still spent.
    try (Database db = Database.open(db().url());
        ClefFlash flash = flash(db, 2)) {
      assertThat(flash.route(question("e2")).reason()).isEqualTo(Reason.MODEL);
      clock.set(Instant.parse("2026-03-04T23:59:59.999Z"));
      assertThat(flash.route(question("e3")).reason()).isEqualTo(Reason.DAILY_CAP);
      assertThat(api.requests()).isEqualTo(2);
      clock.set(Instant.parse("2026-03-05T00:00:00Z"));
      assertThat(flash.route(question("e4")).reason()).as("a new UTC day").isEqualTo(Reason.MODEL);
      assertThat(api.requests()).isEqualTo(3);
      assertThat(callsOn(db, "2026-03-04")).isEqualTo(2);
      assertThat(callsOn(db, "2026-03-05")).isEqualTo(1);
    }
  }

  @DatabaseTest
  void concurrentReservationsNeverPassTheCap() throws Exception {
    int cap = 25;
    try (Database db = Database.open(db().url())) {
      ClefFlashBudget budget = new ClefFlashBudget(db, cap);
      LocalDate day = LocalDate.parse("2026-03-04");
      ExecutorService pool = Executors.newFixedThreadPool(8);
      List<Callable<Boolean>> tries = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        tries.add(() -> budget.reserve(day));
      }
      int taken = 0;
      try {
        for (Future<Boolean> f : pool.invokeAll(tries)) {
          taken += f.get() ? 1 : 0;
        }
      } finally {
        pool.shutdownNow();
      }
      assertThat(taken).isEqualTo(cap);
      assertThat(callsOn(db, "2026-03-04")).isEqualTo(cap);
      assertThat(budget.reserve(day.plusDays(1))).isTrue();
    }
  }
}
