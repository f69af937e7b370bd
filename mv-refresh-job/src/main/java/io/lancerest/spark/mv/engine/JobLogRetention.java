package io.lancerest.spark.mv.engine;

import io.lancerest.spark.connector.read.SafeLanceScan;
import io.lancerest.spark.mv.result.RefreshResult.JobStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.Transaction;
import org.lance.operation.Delete;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which jobs the job log keeps: every row of an ended job that ended longer than {@code maxAge}
 * ago, or that is beyond the newest {@code keepPerView} ended jobs of its view, is deleted.
 *
 * <p>A job's age and rank are taken from its newest row: its {@code completed_at}, else its
 * {@code updated_at} (the last heartbeat), else its {@code launched_at}. A job whose newest row is
 * not ended ({@code SUBMITTED}, {@code RUNNING}) keeps every row, however old. All rows of a
 * pruned job go in one commit, so no earlier state of it can become its newest.
 */
final class JobLogRetention {
  private static final Logger LOG = LoggerFactory.getLogger(JobLogRetention.class);
  /** Tries of one prune; one that still conflicts is left to the next maintenance run. */
  static final int ATTEMPTS = 3;
  private static final List<String> COLUMNS = List.of("job_id", "seq", "view_id", "status",
      "launched_at", "completed_at", "updated_at");

  private final Duration maxAge;
  private final int keepPerView;

  /**
   * @param maxAge ended jobs that ended longer ago are deleted; positive
   * @param keepPerView the ended jobs kept per view, newest first; 1 or more
   */
  JobLogRetention(Duration maxAge, int keepPerView) {
    if (maxAge.isNegative() || maxAge.isZero() || keepPerView < 1) {
      throw new IllegalArgumentException("A job log retention needs a positive age and at least "
          + "one job per view, got " + maxAge + " and " + keepPerView);
    }
    this.maxAge = maxAge;
    this.keepPerView = keepPerView;
  }

  Duration maxAge() {
    return maxAge;
  }

  int keepPerView() {
    return keepPerView;
  }

  /** What one prune deleted. */
  record Pruned(int jobs, long rows) {
    static final Pruned NOTHING = new Pruned(0, 0);
  }

  /**
   * Prunes the log that {@code open} opens at its latest version, at most {@value #ATTEMPTS}
   * times when the commit meets a concurrent one it cannot be rebased on (another driver's
   * compaction or prune of the same fragments); then gives up until the next maintenance run,
   * logging why. Each attempt decides anew on the version it opened.
   */
  Pruned prune(Supplier<Dataset> open, long nowMs, String display) {
    Exception last = null;
    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
      try (Dataset ds = open.get()) {
        Pruned p = pruneAt(ds, nowMs);
        if (p.jobs() > 0) {
          LOG.info("Job log {}: deleted {} ended job(s) ({} rows) that ended more than {} ago "
              + "or are beyond the newest {} of their view", display, p.jobs(), p.rows(),
              maxAge.toSeconds() % 86_400 == 0 ? maxAge.toDays() + "d" : maxAge.toSeconds() + "s",
              keepPerView);
        }
        return p;
      } catch (Exception e) { // lance-core throws its commit conflicts undeclared
        last = e;
      }
    }
    LOG.warn("Job log {}: deleting old jobs failed {} times, the next maintenance tries again: "
        + "{}", display, ATTEMPTS, last.getMessage());
    return Pruned.NOTHING;
  }

  /**
   * Deletes the rows of the jobs to prune as {@code ds}'s version has them, in one commit on that
   * version. Rows appended after it are in fragments this commit does not touch, so they stay
   * (Lance rebases a delete over concurrent appends). Commits nothing when nothing is due.
   */
  Pruned pruneAt(Dataset ds, long nowMs) throws Exception {
    Rows rows = read(ds);
    boolean[] pruned = select(rows.jobs, nowMs);
    TreeMap<Integer, List<Integer>> offsets = new TreeMap<>();
    int jobs = 0;
    for (boolean p : pruned) {
      jobs += p ? 1 : 0;
    }
    if (jobs == 0) {
      return Pruned.NOTHING;
    }
    long deleted = 0;
    for (int i = 0; i < rows.size; i++) {
      if (pruned[rows.job[i]]) {
        long address = rows.address[i];
        offsets.computeIfAbsent((int) (address >>> 32), k -> new ArrayList<>())
            .add((int) address);
        deleted++;
      }
    }
    List<FragmentMetadata> updated = new ArrayList<>();
    List<Long> removed = new ArrayList<>();
    for (Fragment f : ds.getFragments()) {
      List<Integer> rowsOfFragment = offsets.get(f.getId());
      if (rowsOfFragment != null) {
        FragmentMetadata after = f.deleteRows(rowsOfFragment);
        if (after == null) { // lance-core's answer when no row of the fragment is left
          removed.add((long) f.getId());
        } else {
          updated.add(after);
        }
      }
    }
    Transaction txn = new Transaction.Builder().readVersion(ds.version())
        .operation(Delete.builder().updatedFragments(updated).deletedFragmentIds(removed)
            .predicate("job log retention: " + jobs + " ended job(s)").build())
        .build();
    new CommitBuilder(ds).execute(txn).close();
    return new Pruned(jobs, deleted);
  }

  /** One job of the log: its newest row's state, and the view it is ranked in. */
  private static final class Job {
    final int index;
    final String view;
    long seq = Long.MIN_VALUE;
    boolean ended;
    long at;

    Job(int index, String view) {
      this.index = index;
      this.view = view;
    }
  }

  /** Every row of the log: its address and its job; and the jobs, by index. */
  private static final class Rows {
    final List<Job> jobs = new ArrayList<>();
    int size;
    long[] address = new long[1024];
    int[] job = new int[1024];

    void add(long rowAddress, int jobIndex) {
      if (size == address.length) {
        address = Arrays.copyOf(address, size * 2);
        job = Arrays.copyOf(job, size * 2);
      }
      address[size] = rowAddress;
      job[size++] = jobIndex;
    }
  }

  private static Rows read(Dataset ds) throws Exception {
    Rows rows = new Rows();
    Map<String, Job> byId = new HashMap<>();
    SafeLanceScan.scan(ds, SafeLanceScan.Request.of(null, COLUMNS).withRowAddresses()
        .withBatchSize(8192), b -> {
          VectorSchemaRoot root = b.root();
          for (int i = 0; i < b.rowCount(); i++) {
            String id = JobsTable.text(root, "job_id", i);
            Job j = byId.get(id);
            if (j == null) {
              j = new Job(rows.jobs.size(), JobsTable.text(root, "view_id", i));
              byId.put(id, j);
              rows.jobs.add(j);
            }
            rows.add(b.rowAddress(i), j.index);
            Long seq = JobsTable.num(root, "seq", i);
            long s = seq == null ? 0 : seq;
            boolean ended = ended(JobsTable.text(root, "status", i));
            if (s > j.seq) {
              j.seq = s;
              j.ended = ended;
              j.at = endedAt(root, i);
            } else if (s == j.seq) {
              // two newest rows: the job is kept unless both say it ended
              j.ended &= ended;
            }
          }
        });
    return rows;
  }

  private static boolean ended(String status) {
    try {
      return status != null && JobStatus.valueOf(status).ended();
    } catch (IllegalArgumentException unknown) {
      return false; // a status this engine does not know: not its to delete
    }
  }

  private static long endedAt(VectorSchemaRoot root, int i) {
    for (String col : List.of("completed_at", "updated_at", "launched_at")) {
      Long ms = JobsTable.millis(root, col, i);
      if (ms != null && ms > 0) {
        return ms;
      }
    }
    return 0;
  }

  /** Which jobs (by index) to delete. */
  private boolean[] select(List<Job> jobs, long nowMs) {
    boolean[] pruned = new boolean[jobs.size()];
    long maxAgeMs = maxAge.toMillis();
    Map<String, List<Job>> byView = new HashMap<>();
    for (Job j : jobs) {
      if (!j.ended) {
        continue;
      }
      if (nowMs - j.at > maxAgeMs) {
        pruned[j.index] = true;
      } else {
        byView.computeIfAbsent(j.view == null ? "" : j.view, v -> new ArrayList<>()).add(j);
      }
    }
    // The jobs old enough to go ended before any of these, so they are not among the newest.
    Comparator<Job> newestFirst = Comparator.comparingLong((Job j) -> j.at).reversed()
        .thenComparingInt(j -> j.index);
    for (List<Job> ofView : byView.values()) {
      if (ofView.size() > keepPerView) {
        ofView.sort(newestFirst);
        for (Job j : ofView.subList(keepPerView, ofView.size())) {
          pruned[j.index] = true;
        }
      }
    }
    return pruned;
  }
}
