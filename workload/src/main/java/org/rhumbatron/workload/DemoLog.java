package org.rhumbatron.workload;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.filter.ThresholdFilter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.FileAppender;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The demo's logging: core's log goes to a file, and only warnings and errors to stderr, where the
 * progress line is. Closing it puts the console back as it was.
 */
final class DemoLog implements AutoCloseable {
  private static final String CONSOLE = "STDERR"; // the appender of logback.xml
  private static final String PATTERN = "%d{HH:mm:ss.SSS} %-5level [%thread] %logger{30} - %msg%n";

  private final ch.qos.logback.classic.Logger root;
  private final FileAppender<ILoggingEvent> file;
  private final Appender<ILoggingEvent> console;

  private DemoLog(
      ch.qos.logback.classic.Logger root,
      FileAppender<ILoggingEvent> file,
      Appender<ILoggingEvent> console) {
    this.root = root;
    this.file = file;
    this.console = console;
  }

  static DemoLog toFile(Path path) {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
      return new DemoLog(null, null, null); // another binding: its own configuration holds
    }
    ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(context);
    encoder.setPattern(PATTERN);
    encoder.start();
    FileAppender<ILoggingEvent> file = new FileAppender<>();
    file.setContext(context);
    file.setName("demo-file");
    file.setFile(path.toString());
    file.setEncoder(encoder);
    file.start();
    root.addAppender(file);
    Appender<ILoggingEvent> console = root.getAppender(CONSOLE);
    if (console != null) {
      ThresholdFilter warnings = new ThresholdFilter();
      warnings.setLevel(Level.WARN.levelStr);
      warnings.start();
      console.addFilter(warnings);
    }
    return new DemoLog(root, file, console);
  }

  @Override
  public void close() {
    if (root == null) {
      return;
    }
    if (console != null) {
      console.clearAllFilters();
    }
    root.detachAppender(file);
    file.stop();
  }
}
