package io.lancerest.spark.mv.server;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;

/** Every log line of the JVM, INFO and up (what a production log keeps), while open (messages and their throwables). */
final class LogCapture extends AbstractAppender implements AutoCloseable {
  final List<String> lines = new CopyOnWriteArrayList<>();
  private final LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
  private final Level before;

  LogCapture() {
    super("log-capture-" + System.nanoTime(), null, null, false, Property.EMPTY_ARRAY);
    start();
    before = ctx.getConfiguration().getRootLogger().getLevel();
    ctx.getConfiguration().getRootLogger().addAppender(this, Level.INFO, null);
    ctx.getConfiguration().getRootLogger().setLevel(Level.INFO);
    ctx.updateLoggers();
  }

  @Override
  public void append(LogEvent event) {
    StringBuilder sb = new StringBuilder(event.getMessage().getFormattedMessage());
    for (Throwable t = event.getThrown(); t != null; t = t.getCause()) {
      sb.append(" | ").append(t);
    }
    lines.add(sb.toString());
  }

  @Override
  public void close() {
    ctx.getConfiguration().getRootLogger().removeAppender(getName());
    ctx.getConfiguration().getRootLogger().setLevel(before);
    ctx.updateLoggers();
    stop();
  }
}
