package io.lancerest.spark.mv;

import java.io.Serializable;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntConsumer;

/**
 * A {@link RefreshListener} for tests: records each probe's last value (on the driver), and
 * runs what a test asks before the commit or after a write task's batch. One per test; pass it
 * with the refresh.
 */
public final class Probes implements RefreshListener {
  private static final long serialVersionUID = 1L;

  /** A task-side action; serializable, since the listener travels with the write tasks. */
  public interface TaskAction extends IntConsumer, Serializable {}

  private final transient Map<Probe, Object> seen = new ConcurrentHashMap<>();
  private transient volatile Runnable beforeCommit = () -> { };
  private volatile TaskAction afterTaskBatch = p -> { };
  private volatile boolean changedFragmentsOnly = true;

  /** The probe's last value, or {@code null} when the refresh did not report it. */
  @SuppressWarnings("unchecked")
  public <T> T get(Probe p) {
    return seen == null ? null : (T) seen.get(p);
  }

  /** Forgets what was recorded (between two refreshes of one test). */
  public Probes clear() {
    seen.clear();
    return this;
  }

  public Probes beforeCommit(Runnable r) {
    this.beforeCommit = r;
    return this;
  }

  public Probes afterTaskBatch(TaskAction a) {
    this.afterTaskBatch = a;
    return this;
  }

  /** {@code false}: incremental refreshes read every source row. */
  public Probes changedFragmentsOnly(boolean v) {
    this.changedFragmentsOnly = v;
    return this;
  }

  @Override
  public void observe(Probe probe, Object value) {
    if (seen != null && value != null) {
      seen.put(probe, value);
    }
  }

  @Override
  public boolean readChangedFragmentsOnly() {
    return changedFragmentsOnly;
  }

  @Override
  public void beforeCommit() {
    if (beforeCommit != null) {
      beforeCommit.run();
    }
  }

  @Override
  public void afterTaskBatch(int partition) {
    afterTaskBatch.accept(partition);
  }
}
