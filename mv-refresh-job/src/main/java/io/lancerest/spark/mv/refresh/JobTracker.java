package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.result.JobRecord;
import io.lancerest.spark.mv.result.RefreshResult.JobStatus;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The job of one refresh on its driver: its current state, the counters progress is measured
 * with, and the writes of its states to a {@link JobLog}. Every write is best effort: a failed
 * write is logged and the refresh goes on. Ending is once only: the first of {@link #finished},
 * {@link #failed} and {@link #cancelled} is the job's end, later calls are ignored.
 */
public final class JobTracker {
  private static final Logger LOG = LoggerFactory.getLogger(JobTracker.class);
  /** Longest message kept in a job record. */
  static final int MAX_MESSAGE = 4000;
  /** {@code token=...}, {@code "secret": "..."}, {@code Authorization: Bearer ...}. */
  private static final Pattern SECRET = Pattern.compile("(?i)((?:[a-z0-9_.-]*(?:token|secret|"
      + "password|passwd|credential|api[_-]?key|access[_-]?key|account[_-]?key|private[_-]?key"
      + "|authorization|signature|grant|\\bsig)"
      + "[a-z0-9_.-]*)\"?\\s*[=:]\\s*\"?)(?:bearer\\s+|basic\\s+)?[^\\s,;&\"'}]+");

  private final JobLog log;
  private final String jobId;
  private final List<String> view;
  private final String applicationId;
  private final String launchedBy;
  private final long startedAt = System.currentTimeMillis();
  private final AtomicLong itemsDone = new AtomicLong();
  private final AtomicLong itemsTotal = new AtomicLong();
  private final AtomicLong rowsWritten = new AtomicLong();
  private final CountDownLatch ended = new CountDownLatch(1);
  private volatile boolean cancelRequested;
  /**
   * Orders the job's states (the highest wins). Started from the clock, in microseconds, so that
   * a later run reusing the job id (a scheduler's retry) outranks every state of the earlier run.
   */
  private long seq = System.currentTimeMillis() * 1000;
  private boolean endRecorded;
  private boolean recordedRunning;
  private String kind;
  private Long sourceVersion;
  private JobRecord last;

  /** @param view the view's server-side identifier */
  public JobTracker(JobLog log, String jobId, List<String> view, String applicationId,
      String launchedBy) {
    this.log = log == null ? JobLog.NONE : log;
    this.jobId = jobId;
    this.view = view;
    this.applicationId = applicationId;
    this.launchedBy = launchedBy;
  }

  /** A job recorded nowhere (refreshes run outside an engine, EXPLAIN). */
  public static JobTracker none(String jobId) {
    return new JobTracker(JobLog.NONE, jobId, null, null, null);
  }

  public String jobId() {
    return jobId;
  }

  /** Records RUNNING the first time; later calls only add what is now known. */
  public void started(MaterializedViewKind k, Long srcVersion) {
    JobRecord r;
    synchronized (this) {
      if (k != null) {
        kind = k.wire();
      }
      if (srcVersion != null) {
        sourceVersion = srcVersion;
      }
      if (recordedRunning || endRecorded) {
        return;
      }
      recordedRunning = true;
      r = state(JobStatus.RUNNING, null, null, 0, 0, 0);
    }
    write(r);
  }

  /** Spark tasks of the refresh were submitted. */
  public void tasksSubmitted(int n) {
    itemsTotal.addAndGet(n);
  }

  /** A Spark task of the refresh finished, having read and written {@code rows}. */
  public void taskFinished(long rows) {
    itemsDone.incrementAndGet();
    rowsWritten.addAndGet(Math.max(0, rows));
  }

  /** Whether any Spark task of the refresh was submitted yet. */
  public boolean itemsStarted() {
    return itemsTotal.get() > 0;
  }

  /** {@code 3/10 tasks, 520 rows/s} so far. */
  public String progress() {
    return current().progress();
  }

  /** The job's state now (RUNNING with the latest counters, or how it ended). */
  public synchronized JobRecord current() {
    if (last != null && last.status().ended()) {
      return last;
    }
    return new JobRecord(jobId, view, kind, JobStatus.RUNNING, sourceVersion, startedAt, null,
        System.currentTimeMillis(), itemsDone.get(), itemsTotal.get(), rowsWritten.get(), 0, 0,
        0, cancelRequested ? "cancel requested" : null, applicationId, launchedBy, seq);
  }

  /**
   * The RUNNING state with the latest counters, for the periodic heartbeat; {@code null} once
   * ended or before RUNNING was recorded. The caller appends it ({@link #write} semantics).
   */
  public synchronized JobRecord heartbeat() {
    if (!recordedRunning || endRecorded) {
      return null;
    }
    return state(JobStatus.RUNNING, null, cancelRequested ? "cancel requested" : null, 0, 0, 0);
  }

  public void finished(JobStatus status, Long srcVersion, long inserted, long deleted,
      long skipped, String message) {
    end(status, srcVersion, inserted, deleted, skipped, message);
  }

  public void failed(Throwable e) {
    end(JobStatus.FAILED, null, 0, 0, 0, message(e));
  }

  public void cancelled(String message) {
    end(JobStatus.CANCELLED, null, 0, 0, 0, message);
  }

  private void end(JobStatus status, Long srcVersion, long inserted, long deleted, long skipped,
      String message) {
    JobRecord r;
    synchronized (this) {
      if (endRecorded) {
        return;
      }
      endRecorded = true;
      if (srcVersion != null) {
        sourceVersion = srcVersion;
      }
      // every message of a record, a failure's or a note (a replaced source's location)
      r = state(status, System.currentTimeMillis(), redact(message), inserted, deleted,
          skipped);
    }
    try {
      write(r);
    } finally {
      // after the write: whoever waits for the end (CANCEL JOB) then reads it from the log too
      ended.countDown();
    }
  }

  /** Asks the refresh to stop: it throws at its next phase or before its commit. */
  public void requestCancel() {
    cancelRequested = true;
  }

  public boolean cancelRequested() {
    return cancelRequested;
  }

  public boolean ended() {
    return ended.getCount() == 0;
  }

  /** Waits up to {@code millis} for the job to end; whether it did. */
  public boolean awaitEnd(long millis) throws InterruptedException {
    return ended.await(millis, TimeUnit.MILLISECONDS);
  }

  private JobRecord state(JobStatus status, Long finished, String message, long inserted,
      long deleted, long skipped) {
    long now = System.currentTimeMillis();
    last = new JobRecord(jobId, view, kind, status, sourceVersion, startedAt, finished, now,
        itemsDone.get(), itemsTotal.get(), rowsWritten.get(), inserted, deleted, skipped,
        message, applicationId, launchedBy, ++seq);
    return last;
  }

  private void write(JobRecord r) {
    try {
      log.append(List.of(r));
    } catch (Exception | Error e) { // lance-core's IOException is thrown undeclared
      LOG.warn("Job {} of view {}: recording state {} in the job log failed (the refresh goes "
          + "on; the view's own last job stays exact): {}", jobId, view, r.status(),
          message(e));
    }
  }

  /** A throwable's message as a job record keeps it: secrets masked, length bounded. */
  public static String message(Throwable e) {
    String m = e.getMessage() == null ? e.getClass().getName() : e.getMessage();
    return redact(m);
  }

  /**
   * {@code text} with values of secret-looking keys and the user information of URIs masked, at
   * most {@value #MAX_MESSAGE} chars.
   */
  public static String redact(String text) {
    if (text == null) {
      return null;
    }
    String r = SECRET.matcher(LanceLocation.withoutUserInfo(text)).replaceAll("$1***");
    return r.length() <= MAX_MESSAGE ? r : r.substring(0, MAX_MESSAGE - 1) + "…";
  }
}
