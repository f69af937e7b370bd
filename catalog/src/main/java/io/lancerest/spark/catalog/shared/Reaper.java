package io.lancerest.spark.catalog.shared;

import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs an action once an object has become unreachable, on one daemon thread started with the
 * first registration, or earlier when its registration is run by hand.
 *
 * <p>{@link java.lang.ref.Cleaner} does the same, but its thread ends only after the Cleaner
 * itself has been collected: this one ends when {@link #close} is called, so nothing of it is
 * left once its SparkContext has stopped. An action must not reach the object it waits for,
 * or that object never becomes unreachable. While it runs, it also runs a check at a steady
 * rate (whether its owner has ended).
 */
public final class Reaper implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Reaper.class);

  private final String threadName;
  private final long checkEveryMs;
  private final Runnable check;
  private final ReferenceQueue<Object> queue = new ReferenceQueue<>();
  /** Registrations not run yet: a phantom reference must stay reachable to be enqueued. */
  private final Set<Registration> pending = ConcurrentHashMap.newKeySet();
  private Thread thread;
  private boolean closed;

  /**
   * @param check runs on the thread every {@code checkEvery} while it runs; it may {@link
   *     #close} this reaper
   */
  public Reaper(String threadName, Duration checkEvery, Runnable check) {
    this.threadName = threadName;
    this.checkEveryMs = Math.max(1, checkEvery.toMillis());
    this.check = check;
  }

  /**
   * Runs {@code action} after {@code referent} has become unreachable, unless the returned
   * registration has been run or cancelled before.
   *
   * @throws IllegalStateException after {@link #close}
   */
  public synchronized Registration register(Object referent, Runnable action) {
    if (closed) {
      throw new IllegalStateException("The " + threadName + " thread is closed");
    }
    Registration r = new Registration(referent, action);
    pending.add(r);
    if (thread == null) {
      // Not a child of the caller's thread locals: a thread started while a SparkSession is
      // active would otherwise keep that session (and its catalogs) for as long as it runs.
      thread = new Thread(null, this::loop, threadName, 0, false);
      thread.setDaemon(true);
      thread.start();
    }
    return r;
  }

  /** Registrations whose action has not run yet. */
  public int pending() {
    return pending.size();
  }

  /** Whether the thread runs (it starts with the first registration and ends at close). */
  public synchronized boolean running() {
    return thread != null && thread.isAlive();
  }

  private void loop() {
    long nextCheck = System.nanoTime() + checkEveryMs * 1_000_000;
    while (!isClosed()) {
      Registration r;
      try {
        r = (Registration) queue.remove(checkEveryMs);
      } catch (InterruptedException e) {
        return; // closed
      }
      if (r != null) {
        r.run();
      }
      if (System.nanoTime() - nextCheck >= 0) {
        nextCheck = System.nanoTime() + checkEveryMs * 1_000_000;
        try {
          check.run();
        } catch (RuntimeException e) {
          LOG.warn("The {} thread's check failed: {}", threadName, e.toString());
        }
      }
    }
  }

  private synchronized boolean isClosed() {
    return closed;
  }

  /**
   * Ends the thread; actions not run yet never run (their owner closes what they would have
   * released). Idempotent.
   */
  @Override
  public void close() {
    Thread t;
    synchronized (this) {
      closed = true;
      t = thread;
    }
    pending.clear();
    // From its own check, the thread ends after it: not interrupted, as what the check closes
    // next may do I/O.
    if (t != null && t != Thread.currentThread()) {
      t.interrupt();
    }
  }

  /** One object waited for and its action, run at most once. */
  public final class Registration extends PhantomReference<Object> {
    private final Runnable action;
    private final AtomicBoolean done = new AtomicBoolean();

    private Registration(Object referent, Runnable action) {
      super(referent, queue);
      this.action = action;
    }

    /** Forgets the object without running the action, unless it has run. */
    public void cancel() {
      if (done.compareAndSet(false, true)) {
        pending.remove(this);
        clear();
      }
    }

    /** Runs the action now unless it has run; it will not run again. */
    public void run() {
      if (!done.compareAndSet(false, true)) {
        return;
      }
      pending.remove(this);
      clear();
      try {
        action.run();
      } catch (RuntimeException e) {
        LOG.warn("Releasing what an unreachable object held failed: {}", e.toString());
      }
    }
  }
}
