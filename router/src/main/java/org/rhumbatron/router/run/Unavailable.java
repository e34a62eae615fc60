package org.rhumbatron.router.run;

import com.fasterxml.jackson.core.JacksonException;
import java.io.IOException;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import org.rhumbatron.platform.eventlog.ConnectionLostException;

/**
 * Whether a batch failed because the platform's own parts were out of reach (NATS, a JetStream
 * election, the database restarting or full) rather than because of its Events. Such a failure is
 * not the Events' fault, so it does not count towards the seed's 5 failures that dead-letter a
 * batch: the records wait at the nack delay until the part is back. A fenced write is not one: the
 * run gives a batch back uncounted when its node lost the stream while handling it.
 */
public final class Unavailable {
  // PostgreSQL classes: connection exception, insufficient resources, system error (I/O).
  private static final Set<String> POSTGRES_CLASSES = Set.of("08", "53", "58");
  // PostgreSQL states: admin shutdown, crash shutdown, cannot connect now.
  private static final Set<String> POSTGRES_STATES = Set.of("57P01", "57P02", "57P03");
  // sqlite-jdbc names the result code first: the disk is full, an I/O error, the file unopenable.
  private static final Set<String> SQLITE_CODES =
      Set.of("[SQLITE_FULL]", "[SQLITE_IOERR", "[SQLITE_CANTOPEN]");

  private Unavailable() {}

  /** True when {@code failure} or one of its causes is a part of the platform out of reach. */
  public static boolean infrastructure(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof JacksonException) {
        return false; // bytes that do not parse are the record's fault, though an IOException
      }
      if (t instanceof ConnectionLostException
          || t instanceof IOException
          || t instanceof TimeoutException
          || t instanceof SQLTransientException
          || t instanceof SQLRecoverableException
          || (t instanceof SQLException s && unreachable(s))) {
        return true;
      }
    }
    return false;
  }

  private static boolean unreachable(SQLException e) {
    String state = e.getSQLState();
    if (state != null && state.length() == 5) {
      return POSTGRES_CLASSES.contains(state.substring(0, 2)) || POSTGRES_STATES.contains(state);
    }
    String message = e.getMessage();
    return message != null && SQLITE_CODES.stream().anyMatch(message::startsWith);
  }
}
