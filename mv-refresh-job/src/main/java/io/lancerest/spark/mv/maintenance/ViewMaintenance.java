package io.lancerest.spark.mv.maintenance;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.commit.ViewCommitConflictException;
import io.lancerest.spark.mv.rowindex.SourceIdIndexFiles;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.sql.SparkSession;
import org.lance.Dataset;
import org.lance.cleanup.CleanupPolicy;
import org.lance.cleanup.RemovalStats;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compacts a view table and removes its old versions, by a {@link Policy}. Every refresh adds at
 * least one fragment and one version, so a view refreshed every minute gathers some 1,400 of
 * each a day; reads and the incremental diff slow down with each fragment.
 *
 * <p>Compaction ({@link ViewCompaction}) is one commit of the view's own: the live rows of
 * groups of small fragments are written again as one fragment each, with fresh row ids and their
 * source row range, and the view's metadata and config (its watermark, processed parents) stay
 * as they were. A refresh running meanwhile retries its own commit; a refresh that commits
 * first makes the compaction give up until the next time.
 *
 * <p>Old versions: the retention counts from when a version was <em>replaced</em>; the newest
 * version older than the retention, and everything after it, is kept, so a reader or a refresh
 * that opened the view up to the retention ago still finds its version.
 *
 * <p>Side folders: after the cleanup, state folders that no kept version names any more are
 * removed ({@link StateFolderSweep}).
 *
 * <p>The policy is the session's ({@value #PREFIX}{@code *}), each key overridden per view by the
 * view's table property {@value #VIEW_PREFIX}{@code <key>}.
 */
public final class ViewMaintenance {
  private static final Logger LOG = LoggerFactory.getLogger(ViewMaintenance.class);
  /**
   * How old an index folder of a fragment the view does not hold, or a state folder no version
   * names, must be before maintenance removes it: a refresh still running may be about to
   * commit that fragment or folder.
   */
  static final java.time.Duration INDEX_GRACE = java.time.Duration.ofHours(1);
  static final String PREFIX = "spark.lancerest.mv.maintenance.";
  /** Per-view overrides: view table properties {@code lancerest.mv.maintenance.<key>}. */
  public static final String VIEW_PREFIX = "lancerest.mv.maintenance.";
  /**
   * Old versions are looked for when the view's version is a multiple of this, after a
   * compaction, and at every OPTIMIZE MATERIALIZED VIEW; so up to this many versions older than
   * the retention may be kept for a while.
   */
  static final int VERSION_CHECK_EVERY = 16;
  /** Versions kept past which maintenance warns that commits to the view are slowing down. */
  static final int MANY_VERSIONS = 1_000;

  private ViewMaintenance() {}

  /**
   * When to compact and what to keep (session confs {@code spark.lancerest.mv.maintenance.*},
   * view properties {@code lancerest.mv.maintenance.*}).
   *
   * @param enabled run after every refresh commit ({@code enabled}, default true)
   * @param maxFragments compact when the view has more fragments ({@code maxFragments}, 16)
   * @param smallFragmentRows a fragment with fewer rows is small ({@code smallFragmentRows},
   *     65,536)
   * @param maxSmallShare compact when more than this share of at least 8 fragments is small
   *     ({@code maxSmallShare}, 0.5)
   * @param targetRowsPerFragment what compaction writes at most ({@code targetRowsPerFragment},
   *     2^20)
   * @param retention versions older than this are removed ({@code retention}, 1d); it is the
   *     time-travel window the view keeps
   */
  public record Policy(boolean enabled, int maxFragments, long smallFragmentRows,
      double maxSmallShare, long targetRowsPerFragment, Duration retention) {
    /** The session's policy. */
    public static Policy of(SparkSession spark) {
      return of(session(spark), Map.of());
    }

    /** The session's confs, by key without the prefix ({@code null} when unset). */
    public static Function<String, String> session(SparkSession spark) {
      return key -> spark.conf().getOption(PREFIX + key).isDefined()
          ? spark.conf().get(PREFIX + key) : null;
    }

    /** The session's policy with the overrides among {@code viewProperties}. */
    static Policy of(Function<String, String> session, Map<String, String> viewProperties) {
      Function<String, String> conf = key -> viewProperties.containsKey(VIEW_PREFIX + key)
          ? viewProperties.get(VIEW_PREFIX + key) : session.apply(key);
      try {
        String enabled = conf.apply("enabled");
        String maxFragments = conf.apply("maxFragments");
        String small = conf.apply("smallFragmentRows");
        String share = conf.apply("maxSmallShare");
        String target = conf.apply("targetRowsPerFragment");
        String retention = conf.apply("retention");
        if (enabled != null && !enabled.trim().equalsIgnoreCase("true")
            && !enabled.trim().equalsIgnoreCase("false")) {
          throw new IllegalArgumentException("enabled = '" + enabled + "'");
        }
        Policy p = new Policy(enabled == null || Boolean.parseBoolean(enabled.trim()),
            maxFragments == null ? 16 : Integer.parseInt(maxFragments.trim()),
            small == null ? 65_536 : Long.parseLong(small.trim()),
            share == null ? 0.5 : Double.parseDouble(share.trim()),
            target == null ? 1 << 20 : Long.parseLong(target.trim()),
            Duration.ofMillis(JavaUtils.timeStringAsMs(retention == null ? "1d"
                : retention.trim())));
        if (p.maxFragments < 2 || p.smallFragmentRows < 0 || p.maxSmallShare < 0
            || p.maxSmallShare > 1 || p.targetRowsPerFragment < 1 || p.retention.isNegative()) {
          throw new IllegalArgumentException("out of range");
        }
        return p;
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("The maintenance policy (session confs " + PREFIX
            + "*, view properties " + VIEW_PREFIX + "*) is not valid (" + e.getMessage()
            + "): enabled true or false, maxFragments >= 2, smallFragmentRows >= 0, "
            + "maxSmallShare from 0 to 1, targetRowsPerFragment >= 1, retention a duration "
            + "such as 1h");
      }
    }
  }

  /**
   * What maintenance did.
   *
   * @param compacted whether it compacted (else the fragments were within the policy)
   * @param versionsRemoved old versions removed
   * @param compactionSkipped why a compaction that was due did not run, or {@code null}
   * @param indexes what the compaction's commit did to each index of the view, or what
   *     registering the indexes an interrupted commit owed did; {@code null}: nothing
   */
  public record Outcome(boolean compacted, int fragmentsBefore, int fragmentsAfter,
      long versionsRemoved, long bytesRemoved, String compactionSkipped, String indexes) {
    /** {@code compacted 40 -> 2 fragments, 38 old versions removed}, or null for nothing. */
    public String summary() {
      if (!compacted && versionsRemoved == 0 && compactionSkipped == null) {
        return null;
      }
      String c = compacted ? "compacted " + fragmentsBefore + " -> " + fragmentsAfter
          + " fragments" : compactionSkipped != null ? "compaction skipped ("
          + compactionSkipped + ")" : "no compaction needed (" + fragmentsBefore
          + " fragments)";
      return c + ", " + versionsRemoved + " old versions removed"
          + (indexes == null ? "" : "; indexes: " + indexes);
    }
  }

  /**
   * The oldest version to keep: the newest one created before {@code cutoffMillis} (it was the
   * view until a later one replaced it, within the retention), or {@code null} when nothing is
   * old enough to remove.
   */
  public static Long oldestKept(List<org.lance.Version> versions, long cutoffMillis) {
    Long keep = null;
    for (org.lance.Version v : versions) {
      if (v.getDataTime().toInstant().toEpochMilli() <= cutoffMillis
          && (keep == null || v.getId() > keep)) {
        keep = v.getId();
      }
    }
    if (keep == null) {
      return null;
    }
    long first = versions.stream().mapToLong(org.lance.Version::getId).min().orElse(keep);
    return keep > first ? keep : null;
  }

  /**
   * Whether the fragments' row counts call for a compaction into fragments of {@code target}
   * rows: too many fragments, where compaction could remove at least a third of them, or mostly
   * small ones. Fragments that are full already (half the target or more: a view refreshed with
   * a small {@code max_rows_per_fragment}) are left as they are.
   */
  static boolean needsCompaction(List<Long> fragmentRows, Policy p, long target) {
    int n = fragmentRows.size();
    if (n <= 1) {
      return false;
    }
    long full = fullRows(target);
    long notFull = fragmentRows.stream().filter(r -> r < full).count();
    long notFullRows = fragmentRows.stream().filter(r -> r < full).mapToLong(Long::longValue)
        .sum();
    long merged = Math.max(1, (notFullRows + target - 1) / target);
    if (n > p.maxFragments() && notFull - merged >= Math.max(1, n / 3)) {
      return true;
    }
    long smallBelow = Math.min(p.smallFragmentRows(), full);
    long small = fragmentRows.stream().filter(r -> r < smallBelow).count();
    return n >= 8 && small >= 2 && (double) small / n > p.maxSmallShare();
  }

  /** A fragment of this many rows or more is full at {@code target}: half of it, rounded up. */
  static long fullRows(long target) {
    return Math.max(1, (target + 1) / 2);
  }

  /**
   * Maintains the view table by the session's policy and the view's overrides.
   *
   * @param session the session's maintenance confs by key ({@link Policy#session})
   * @param serverProperties the view's properties as its namespace server keeps them (they win
   *     over the view's dataset config, where the catalog keeps them otherwise)
   * @param force compact whatever the thresholds say, and even when maintenance is off
   *     (OPTIMIZE MATERIALIZED VIEW)
   * @param maxRowsPerFragment the refresh's {@code max_rows_per_fragment}, or {@code null}:
   *     compaction never writes larger fragments than the refresh asked for
   * @return what it did, or {@code null} when maintenance is off for this view
   */
  public static Outcome run(LanceLocation view, Function<String, String> session,
      Map<String, String> serverProperties, boolean force, Integer maxRowsPerFragment) {
    try (BufferAllocator a = new RootAllocator();
        Dataset latest = view.open(a, null)) {
      return run(view, latest, session, serverProperties, force, maxRowsPerFragment);
    }
  }

  /**
   * {@link #run(LanceLocation, Function, Map, boolean, Integer)} from {@code latest}, the view
   * table at the version just committed, as the caller holds it (and closes).
   */
  public static Outcome run(LanceLocation view, Dataset latest, Function<String, String> session,
      Map<String, String> serverProperties, boolean force, Integer maxRowsPerFragment) {
    String uri = view.uri();
    // under the dataset's root: the compaction moves its scans' buffers into its writes
    try (BufferAllocator a = latest.allocator().newChildAllocator("view maintenance", 0,
        Long.MAX_VALUE)) {
      Dataset ds = latest;
      try {
        Map<String, String> props = new HashMap<>(ds.getConfig());
        props.putAll(serverProperties == null ? Map.of() : serverProperties);
        Policy p = Policy.of(session, props);
        if (!p.enabled() && !force) {
          return null;
        }
        long target = maxRowsPerFragment == null ? p.targetRowsPerFragment()
            : Math.min(p.targetRowsPerFragment(), maxRowsPerFragment);
        List<ViewCompaction.Frag> frags = ds.getFragments().stream()
            .map(f -> new ViewCompaction.Frag(f.getId(), f.metadata().getNumRows())).toList();
        int before = frags.size();
        List<List<Integer>> groups = force
            ? ViewCompaction.plan(frags, target, 1, p.smallFragmentRows(), true)
            : needsCompaction(frags.stream().map(ViewCompaction.Frag::rows).toList(), p, target)
                ? ViewCompaction.plan(frags, target, Math.max(1, p.maxFragments() / 2),
                    p.smallFragmentRows(), false)
                : List.of();
        boolean compacted = false;
        String skipped = null;
        String indexes = null;
        if (!groups.isEmpty()) {
          try {
            io.lancerest.spark.mv.commit.ViewCommitResult r = ViewCompaction.run(ds, view, a,
                groups);
            compacted = true;
            indexes = r == null ? null : r.indexSummary();
          } catch (ViewCommitConflictException e) {
            skipped = "another commit landed meanwhile; the next maintenance compacts";
          } catch (IllegalStateException e) {
            if (force) {
              throw e;
            }
            // a view this compaction cannot rewrite (a blob column): old versions still go
            skipped = e.getMessage();
          }
          Dataset now = view.open(a, null);
          if (ds != latest) {
            ds.close();
          }
          ds = now;
        }
        int after = ds.getFragments().size();
        if (force && skipped != null) {
          return new Outcome(false, before, after, 0, 0, skipped, indexes); // no cleanup
        }
        // Listing versions and cleaning up take time linear in the versions kept (72 ms and
        // 50 ms at 1,000 on a local disk): done every few versions, not at every refresh.
        if (!force && !compacted && ds.version() % VERSION_CHECK_EVERY != 0) {
          return new Outcome(false, before, after, 0, 0, skipped, indexes);
        }
        if (!compacted) {
          // Segments an interrupted commit still owes are named by no version the cleanup
          // keeps: registered first, or the cleanup would remove their files.
          String owed = io.lancerest.spark.mv.commit.ViewCommit.registerOwedIndexes(view);
          if (owed != null) {
            indexes = owed;
            Dataset now = view.open(a, null);
            if (ds != latest) {
              ds.close();
            }
            ds = now;
          }
        }
        // only from the latest version: a writer that committed since this one may hold
        // fragments whose indexes this version does not list
        int swept = ds.version() != ds.latestVersion() ? 0
            : SourceIdIndexFiles.sweep(uri, ds.getFragments().stream()
                .map(org.lance.Fragment::metadata).toList(), INDEX_GRACE);
        if (swept > 0) {
          LOG.debug("View table {}: {} source id index folders of fragments it no longer holds "
              + "removed", uri, swept);
        }
        List<org.lance.Version> versions = ds.listVersions();
        Long keepFrom = oldestKept(versions, System.currentTimeMillis()
            - p.retention().toMillis());
        long kept = keepFrom == null ? versions.size()
            : versions.stream().filter(v -> v.getId() >= keepFrom).count();
        if (kept > MANY_VERSIONS) {
          LOG.warn("View table {} keeps {} versions within its retention of {}: every commit to "
              + "it takes longer with them (about 15 ms a commit at 1,000 versions on a local "
              + "disk, against 1-2 ms at 20), so its refreshes slow down as they pile up. A "
              + "shorter retention "
              + "(view property lancerest.mv.maintenance.retention) keeps them fast; if the "
              + "retention is meant for time travel, this is its cost.", uri, kept,
              p.retention());
        }
        RemovalStats removed = keepFrom == null ? null : ds.cleanupWithPolicy(
            CleanupPolicy.builder().withBeforeVersion(keepFrom).build());
        // after the cleanup: a folder only the removed versions named goes now
        int states = ds.version() != ds.latestVersion() ? 0
            : StateFolderSweep.sweep(view, ds, INDEX_GRACE);
        if (states > 0) {
          LOG.info("View table {}: {} state folders that no kept version names removed",
              LanceLocation.withoutUserInfo(uri), states);
        }
        return new Outcome(compacted, before, after, removed == null ? 0
            : removed.getOldVersions(), removed == null ? 0 : removed.getBytesRemoved(),
            skipped, indexes);
      } finally {
        if (ds != latest) {
          ds.close();
        }
      }
    }
  }
}
