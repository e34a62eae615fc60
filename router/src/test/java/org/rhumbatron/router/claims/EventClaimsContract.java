package org.rhumbatron.router.claims;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.TestDatabase;

/** claimEvents on a real database; run against SQLite and PostgreSQL. */
abstract class EventClaimsContract {
  abstract TestDatabase db();

  private final EventClaims claims = new EventClaims(new SettableClock());

  @Test
  void anEventIsFreshOncePerConsumer() {
    try (Database db = Database.open(db().url())) {
      List<String> first =
          db.inTransaction(
              tx -> claims.claimEvents(tx, 0, "project-view-projector", List.of("e1", "e2")));
      List<String> again =
          db.inTransaction(
              tx -> claims.claimEvents(tx, 0, "project-view-projector", List.of("e2", "e3")));
      List<String> other =
          db.inTransaction(tx -> claims.claimEvents(tx, 0, "causal-router", List.of("e1")));
      assertThat(first).containsExactly("e1", "e2");
      assertThat(again).as("the duplicate delivery applies nothing").containsExactly("e3");
      assertThat(other).as("claims are per consumer").containsExactly("e1");
    }
  }

  @Test
  void aReleasedClaimIsFreshOnTheNextDelivery() {
    try (Database db = Database.open(db().url())) {
      db.inTransaction(tx -> claims.claimEvents(tx, 0, "causal-router", List.of("e1", "e2")));
      Integer released = db.inTransaction(tx -> claims.release(tx, "causal-router", List.of("e2")));
      assertThat(released).isEqualTo(1);
      List<String> next =
          db.inTransaction(tx -> claims.claimEvents(tx, 0, "causal-router", List.of("e1", "e2")));
      assertThat(next).containsExactly("e2");
    }
  }

  @Test
  void aClaimRollsBackWithTheEffectItGuards() {
    try (Database db = Database.open(db().url())) {
      assertThatThrownBy(
              () ->
                  db.inTransaction(
                      tx -> {
                        claims.claimEvents(tx, 0, "audit-archiver", List.of("e9"));
                        throw new IllegalStateException("the effect failed");
                      }))
          .hasMessage("the effect failed");
      List<String> fresh =
          db.inTransaction(tx -> claims.claimEvents(tx, 0, "audit-archiver", List.of("e9")));
      assertThat(fresh).containsExactly("e9");
    }
  }
}
