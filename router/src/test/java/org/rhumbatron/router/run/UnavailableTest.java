package org.rhumbatron.router.run;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonParseException;
import java.io.IOException;
import java.sql.SQLException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.rhumbatron.platform.eventlog.ConnectionLostException;

/** Which failures are a part of the platform out of reach, and which are the Events' own. */
class UnavailableTest {

  @Test
  void aCommandSendWithoutRespondersDuringAnElectionIsInfrastructure() {
    // How a causal send fails while the COMMANDS stream has no leader, as jnats reports it.
    Throwable send =
        new IllegalStateException(
            "a causal command was not sent",
            new ExecutionException(
                new IOException("Error Publishing: 503 No Responders Available For Request")));
    assertThat(Unavailable.infrastructure(send)).isTrue();
  }

  @Test
  void timeoutsLostPubAcksAndUnreachableDatabasesAreInfrastructure() {
    assertThat(Unavailable.infrastructure(new RuntimeException(new TimeoutException()))).isTrue();
    assertThat(Unavailable.infrastructure(new ConnectionLostException("no PubAck"))).isTrue();
    assertThat(
            Unavailable.infrastructure(
                new RuntimeException(new SQLException("connection refused", "08001"))))
        .isTrue();
    assertThat(Unavailable.infrastructure(new SQLException("terminating connection", "57P01")))
        .isTrue();
    assertThat(Unavailable.infrastructure(new SQLException("could not extend file", "53100")))
        .isTrue();
    assertThat(
            Unavailable.infrastructure(
                new SQLException(
                    "[SQLITE_FULL] Insertion failed because database is full (database or disk"
                        + " is full)")))
        .isTrue();
  }

  @Test
  void theEventsOwnFailuresCount() {
    assertThat(Unavailable.infrastructure(new IllegalStateException("a task.ready without Task")))
        .isFalse();
    assertThat(
            Unavailable.infrastructure(
                new RuntimeException(new SQLException("duplicate key value", "23505"))))
        .isFalse();
    assertThat(Unavailable.infrastructure(new SQLException("[SQLITE_CONSTRAINT] UNIQUE failed")))
        .isFalse();
    // Jackson's parse errors are IOExceptions, but bytes that do not parse stay bad on redelivery.
    assertThat(
            Unavailable.infrastructure(
                new RuntimeException(new JsonParseException(null, "Unexpected character"))))
        .isFalse();
  }
}
