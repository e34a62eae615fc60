package org.rhumbatron.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.lifecycle.tasks.TaskToken;
import org.rhumbatron.lifecycle.tasks.TaskTokens;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.secrets.SigningKeys;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;

/**
 * Task tokens on each real database: two cores (two {@link TaskTokens} over one table, each with
 * its own memory) check each other's tokens; a token is its Task attempt's only, ends at its
 * expiry, survives a key rotation for the overlap and not after, and any changed byte refuses it.
 */
class TaskTokensTest {
  static final Duration MAX_AGE = Duration.ofHours(1);
  static final Duration ROTATION = Duration.ofHours(6);
  static final TaskRef REF = new TaskRef("p-1", "chg_1", "chg_1:api", "agt_1", 2);

  TestDatabase testDatabase; // set per run: SQLite, then PostgreSQL
  final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
  Database database;
  TaskTokens core1;
  TaskTokens core2;

  @BeforeEach
  void open() {
    database = Database.open(testDatabase.url());
    core1 = new TaskTokens(new SigningKeys(database, clock), clock, MAX_AGE, ROTATION);
    core2 = new TaskTokens(new SigningKeys(database, clock), clock, MAX_AGE, ROTATION);
  }

  @AfterEach
  void close() {
    database.close();
  }

  @DatabaseTest
  void aTokenOfOneCoreIsCheckedByAnotherAndNamesItsAttempt() {
    String token = core1.issue(REF);
    assertThat(token).startsWith("rtk_");
    TaskToken granted = core2.verify(token).orElseThrow();
    assertThat(granted.covers(REF)).isTrue();
    assertThat(granted.covers(new TaskRef("p-1", "chg_1", "chg_1:web", "agt_1", 2))).isFalse();
    assertThat(granted.covers(new TaskRef("p-1", "chg_1", "chg_1:api", "agt_2", 2))).isFalse();
    assertThat(granted.covers(new TaskRef("p-1", "chg_1", "chg_1:api", "agt_1", 1))).isFalse();
    assertThat(granted.expiresAt()).isEqualTo(clock.instant().plus(MAX_AGE));
  }

  @DatabaseTest
  void aTokenEndsAtItsExpiry() {
    String token = core1.issue(REF);
    clock.advance(MAX_AGE.minusMillis(1));
    assertThat(core2.verify(token)).isPresent();
    clock.advance(Duration.ofMillis(1));
    assertThat(core2.verify(token)).isEmpty();
  }

  @DatabaseTest
  void anyChangedPartIsRefused() {
    String token = core1.issue(REF);
    int dot = token.indexOf('.');
    String claims = token.substring(4, dot);
    String json = new String(Base64.getUrlDecoder().decode(claims), StandardCharsets.UTF_8);
    String otherTask = json.replace("chg_1:api", "chg_1:web");
    String forged =
        "rtk_"
            + Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString(otherTask.getBytes(StandardCharsets.UTF_8))
            + token.substring(dot);
    assertThat(core2.verify(forged)).isEmpty();
    int at = dot + 5; // a whole byte of the mac (the last character carries spare bits)
    String badMac =
        token.substring(0, at) + (token.charAt(at) == 'A' ? 'B' : 'A') + token.substring(at + 1);
    assertThat(core2.verify(badMac)).isEmpty();
    assertThat(core2.verify("rtk_" + claims)).isEmpty();
    assertThat(core2.verify("rtk_!!.!!")).isEmpty();
    assertThat(core2.verify(token.substring(4))).isEmpty();
  }

  @DatabaseTest
  void aRotatedKeyChecksForTheOverlapAndNoLonger() {
    String old = core1.issue(REF);
    clock.advance(ROTATION); // the key is due: the next token is signed with a new key
    String fresh = core2.issue(REF);
    assertThat(keyOf(fresh)).isNotEqualTo(keyOf(old));
    assertThat(core1.verify(fresh)).isPresent(); // a key core1 has not seen: read once
    clock.advance(MAX_AGE.minusMillis(1));
    assertThat(keyOf(core1.issue(REF))).isEqualTo(keyOf(fresh));
    clock.advance(Duration.ofMillis(1));
    assertThat(core2.verify(fresh)).isEmpty(); // its own expiry
    String later = core1.issue(REF);
    assertThat(core2.verify(later)).isPresent();
    long keys = database.read(tx -> tx.queryLong("SELECT COUNT(*) FROM signing_keys"));
    assertThat(keys).isEqualTo(2);
  }

  @DatabaseTest
  void aTokenSignedJustBeforeARotationChecksUntilItsOwnExpiry() {
    core1.issue(REF); // the first key is made now
    clock.advance(ROTATION.minusSeconds(1));
    String lastOfOld = core1.issue(REF);
    clock.advance(Duration.ofSeconds(1));
    String firstOfNew = core2.issue(REF); // rotates: the old key checks for MAX_AGE more
    assertThat(keyOf(firstOfNew)).isNotEqualTo(keyOf(lastOfOld));
    clock.advance(MAX_AGE.minusSeconds(1).minusMillis(1));
    assertThat(core2.verify(lastOfOld)).isPresent();
    assertThat(core1.verify(lastOfOld)).isPresent();
    clock.advance(Duration.ofMillis(1));
    assertThat(core2.verify(lastOfOld)).isEmpty();
  }

  private static String keyOf(String token) {
    String claims = token.substring(4, token.indexOf('.'));
    String json = new String(Base64.getUrlDecoder().decode(claims), StandardCharsets.UTF_8);
    return json.substring(2, json.indexOf('"', 2));
  }
}
