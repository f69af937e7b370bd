package io.lancerest.client.testing;

import java.io.StringWriter;
import java.util.List;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.WriterAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.layout.PatternLayout;

/**
 * Captures log output while open, through log4j2 (the SLF4J binding Spark puts on the test
 * classpath): the named loggers at DEBUG and, optionally, everything else at a coarser level.
 * Exceptions are rendered with their stack and causes, since a secret in a cause's message leaks
 * just as well.
 */
public final class LogCapture implements AutoCloseable {
  private final StringWriter out = new StringWriter();
  private final LoggerContext context;
  private final List<String> debugLoggers;
  private final Level rootLevel;
  private final WriterAppender appender;
  /** Loggers configured under a captured name before the capture, put back on close. */
  private final java.util.Map<String, LoggerConfig> replaced = new java.util.HashMap<>();

  /** Only {@code loggerName} and its children, at DEBUG. */
  public LogCapture(String loggerName) {
    this(null, List.of(loggerName));
  }

  /**
   * {@code debugLoggers} at DEBUG, and everything else at {@code rootLevel} ({@code null}: only
   * the named loggers).
   */
  public LogCapture(Level rootLevel, List<String> debugLoggers) {
    this.rootLevel = rootLevel;
    this.debugLoggers = List.copyOf(debugLoggers);
    this.context = (LoggerContext) LogManager.getContext(false);
    Configuration config = context.getConfiguration();
    this.appender = WriterAppender.newBuilder()
        .setName("capture-" + System.nanoTime())
        .setTarget(out)
        .setLayout(PatternLayout.newBuilder().withPattern("%p %c %m%n%ex").build())
        .build();
    appender.start();
    config.addAppender(appender);
    if (rootLevel != null) {
      config.getRootLogger().addAppender(appender, rootLevel, null);
    }
    for (String name : this.debugLoggers) {
      // A logger already configured under this name (a log4j2.properties on the test class
      // path, e.g. the connector's test classes in a reactor run) would win over ours, which
      // Configuration.addLogger does not replace: set it aside until close.
      LoggerConfig existing = config.getLoggers().get(name);
      if (existing != null) {
        replaced.put(name, existing);
        config.removeLogger(name);
      }
      // Not additive when only these loggers are captured: their DEBUG lines stay out of the
      // console. With the root captured too, they also reach the root's usual appenders.
      LoggerConfig logger = new LoggerConfig(name, Level.DEBUG, rootLevel != null);
      logger.addAppender(appender, Level.DEBUG, null);
      config.addLogger(name, logger);
    }
    context.updateLoggers();
  }

  public String text() {
    synchronized (out) {
      return out.toString();
    }
  }

  @Override
  public void close() {
    Configuration config = context.getConfiguration();
    debugLoggers.forEach(config::removeLogger);
    replaced.forEach(config::addLogger);
    if (rootLevel != null) {
      config.getRootLogger().removeAppender(appender.getName());
    }
    context.updateLoggers();
    appender.stop();
  }
}
