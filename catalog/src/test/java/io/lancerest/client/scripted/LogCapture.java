package io.lancerest.client.scripted;

import java.io.StringWriter;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.WriterAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.layout.PatternLayout;

/**
 * Captures, at DEBUG, everything logged under a logger name, through log4j2 (the SLF4J binding
 * Spark puts on the test classpath). Exceptions are rendered with their stack and causes, since
 * a secret in a cause's message leaks just as well.
 */
final class LogCapture implements AutoCloseable {
  private final StringWriter out = new StringWriter();
  private final LoggerContext context;
  private final String loggerName;
  private final WriterAppender appender;

  LogCapture(String loggerName) {
    this.loggerName = loggerName;
    this.context = (LoggerContext) LogManager.getContext(false);
    Configuration config = context.getConfiguration();
    this.appender = WriterAppender.newBuilder()
        .setName("capture-" + System.nanoTime())
        .setTarget(out)
        .setLayout(PatternLayout.newBuilder().withPattern("%p %c %m%n%ex").build())
        .build();
    appender.start();
    config.addAppender(appender);
    LoggerConfig logger = new LoggerConfig(loggerName, Level.DEBUG, false);
    logger.addAppender(appender, Level.DEBUG, null);
    config.addLogger(loggerName, logger);
    context.updateLoggers();
  }

  String text() {
    synchronized (out) {
      return out.toString();
    }
  }

  @Override
  public void close() {
    Configuration config = context.getConfiguration();
    config.removeLogger(loggerName);
    context.updateLoggers();
    appender.stop();
  }
}
