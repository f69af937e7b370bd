package io.lancerest.faults;

import java.util.concurrent.atomic.AtomicInteger;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

/**
 * Fails the driver at a point the engine only marks with a log line: an appender on one engine
 * logger that throws (appender exceptions not ignored, so they reach the caller of {@code
 * LOG.info}) when an armed message appears. How the suite makes a refresh die right after its
 * commit was applied, before it could report: the client-side form of "the commit's answer was
 * lost", since a client-managed view is committed to storage, not through a REST call.
 */
final class LogTrigger extends AbstractAppender implements AutoCloseable {
  private final String logger;
  private final String contains;
  private final LoggerConfig config;
  private final LoggerContext ctx;
  final AtomicInteger fired = new AtomicInteger();

  private LogTrigger(String logger, String contains) {
    super("faults-trigger-" + System.nanoTime(), null, null, false, Property.EMPTY_ARRAY);
    this.logger = logger;
    this.contains = contains;
    this.ctx = (LoggerContext) LogManager.getContext(false);
    Configuration c = ctx.getConfiguration();
    LoggerConfig lc = new LoggerConfig(logger, Level.INFO, true);
    c.addLogger(logger, lc);
    this.config = lc;
    start();
    lc.addAppender(this, Level.INFO, null);
    ctx.updateLoggers();
  }

  /** Throws once, at the first INFO line of {@code loggerClass} containing {@code contains}. */
  static LogTrigger arm(Class<?> loggerClass, String contains) {
    return new LogTrigger(loggerClass.getName(), contains);
  }

  @Override
  public void append(LogEvent event) {
    String m = event.getMessage().getFormattedMessage();
    if (m.contains(contains) && fired.getAndIncrement() == 0) {
      throw new IllegalStateException("injected crash after: " + m);
    }
  }

  @Override
  public void close() {
    ctx.getConfiguration().removeLogger(logger);
    ctx.updateLoggers();
    stop();
  }
}
