package org.rhumbatron.coordinator;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/** Collects what one class logs while it is open (logback, the tests' SLF4J binding). */
public final class LogCapture implements AutoCloseable {
  private final Logger logger;
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  private LogCapture(Class<?> source) {
    this.logger = (Logger) LoggerFactory.getLogger(source);
    appender.start();
    logger.addAppender(appender);
  }

  public static LogCapture of(Class<?> source) {
    return new LogCapture(source);
  }

  /** The formatted messages logged so far. */
  public List<String> messages() {
    return List.copyOf(appender.list).stream().map(ILoggingEvent::getFormattedMessage).toList();
  }

  @Override
  public void close() {
    logger.detachAppender(appender);
    appender.stop();
  }
}
