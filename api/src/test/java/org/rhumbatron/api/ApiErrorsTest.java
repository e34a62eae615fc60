package org.rhumbatron.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ConnectException;
import java.sql.SQLException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.rhumbatron.platform.cluster.Duty;
import org.rhumbatron.platform.cluster.FencedException;
import org.rhumbatron.platform.db.DatabaseException;

/**
 * Which failures the API answers 503 with Retry-After (a retry may succeed, on this node or
 * another) rather than 500: the node lost the duty it needed, or the database did not answer.
 */
class ApiErrorsTest {

  @Test
  void aFencedWriteWrappedByItsHandlerIsRetryableAndNamesTheDuty() {
    FencedException fenced = new FencedException(Duty.stream(3), "n1", 4, 5, "n2");
    String why = ApiErrors.retryable(new CompletionException(new IllegalStateException(fenced)));
    assertThat(why).isEqualTo("this node no longer holds " + Duty.stream(3).key() + ": retry");
  }

  @Test
  void aDatabaseThatDoesNotAnswerIsRetryable() {
    SQLException refused = new SQLException("Connection to 127.0.0.1:5432 refused", "08001");
    assertThat(ApiErrors.retryable(new DatabaseException("no connection to db", refused)))
        .startsWith("the database is unavailable: ")
        .contains("refused");
    SQLException shutdown = new SQLException("terminating connection", "57P01");
    assertThat(ApiErrors.retryable(new DatabaseException("SQL error", shutdown))).isNotNull();
    assertThat(ApiErrors.retryable(new RuntimeException(new ConnectException("refused"))))
        .isNotNull();
  }

  @Test
  void aBugOrABadStatementIsNot() {
    assertThat(ApiErrors.retryable(new IllegalStateException("bug"))).isNull();
    SQLException syntax = new SQLException("syntax error", "42601");
    assertThat(ApiErrors.retryable(new DatabaseException("SQL error", syntax))).isNull();
  }
}
