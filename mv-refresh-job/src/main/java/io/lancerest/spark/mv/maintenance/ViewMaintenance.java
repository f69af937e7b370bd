package io.lancerest.spark.mv.maintenance;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.sql.SparkSession;
import org.lance.Dataset;
import org.lance.ReadOptions;
import org.lance.cleanup.CleanupPolicy;
import org.lance.cleanup.RemovalStats;
import org.lance.compaction.CompactionOptions;

/**
 * Compacts a view table and removes its old versions, by a {@link Policy}. Every refresh adds at
 * least one fragment and one version, so a view refreshed every minute gathers some 1,400 of
 * each a day; reads and the incremental diff slow down with each fragment.
 *
 * <p>Compaction rewrites rows with their columns (the source row ids the refresh keys on
 * included) and keeps the view's metadata and config (its watermark, processed parents); it is
 * one more commit, so a refresh running meanwhile retries its own commit. Two costs keep it off
 * by default: fragments it rewrites lose the source row ranges a query-view refresh reads them
 * by (so later refreshes read them whole), and rewriting fragments that have deletions leaves
 * row-id sequences with holes, on which lance-core 4.0.0's filtered and vector scans are not safe
 * (the catalog then reads them without push-down and refuses vector search).
 *
 * <p>Old versions: the retention counts from when a version was <em>replaced</em>; the newest
 * version older than the retention, and everything after it, is kept, so a reader or a refresh
 * that opened the view up to the retention ago still finds its version.
 */
public final class ViewMaintenance {
  static final String PREFIX = "spark.lancerest.mv.maintenance.";

  private ViewMaintenance() {}

  /**
   * When to compact and what to keep (session confs {@code spark.lancerest.mv.maintenance.*}).
   *
   * @param enabled run after every refresh commit ({@code enabled}, default false: see the
   *     class comment for what compaction costs a view today)
   * @param maxFragments compact when the view has more fragments ({@code maxFragments}, 16)
   * @param smallFragmentRows a fragment with fewer rows is small ({@code smallFragmentRows},
   *     65,536)
   * @param maxSmallShare compact when more than this share of at least 8 fragments is small
   *     ({@code maxSmallShare}, 0.5)
   * @param targetRowsPerFragment what compaction writes ({@code targetRowsPerFragment}, 2^20)
   * @param retention versions older than this are removed ({@code retention}, 1h); it is the
   *     time-travel window the view keeps
   */
  public record Policy(boolean enabled, int maxFragments, long smallFragmentRows,
      double maxSmallShare, long targetRowsPerFragment, Duration retention) {
    public static Policy of(SparkSession spark) {
      return of(key -> spark.conf().getOption(PREFIX + key).isDefined()
          ? spark.conf().get(PREFIX + key) : null);
    }

    static Policy of(java.util.function.Function<String, String> conf) {
      try {
        String enabled = conf.apply("enabled");
        String maxFragments = conf.apply("maxFragments");
        String small = conf.apply("smallFragmentRows");
        String share = conf.apply("maxSmallShare");
        String target = conf.apply("targetRowsPerFragment");
        String retention = conf.apply("retention");
        Policy p = new Policy(enabled != null && Boolean.parseBoolean(enabled.trim()),
            maxFragments == null ? 16 : Integer.parseInt(maxFragments.trim()),
            small == null ? 65_536 : Long.parseLong(small.trim()),
            share == null ? 0.5 : Double.parseDouble(share.trim()),
            target == null ? 1 << 20 : Long.parseLong(target.trim()),
            Duration.ofMillis(JavaUtils.timeStringAsMs(retention == null ? "1h"
                : retention.trim())));
        if (p.maxFragments < 1 || p.smallFragmentRows < 0 || p.maxSmallShare < 0
            || p.maxSmallShare > 1 || p.targetRowsPerFragment < 1 || p.retention.isNegative()) {
          throw new IllegalArgumentException("out of range");
        }
        return p;
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("The " + PREFIX + "* confs are not a valid "
            + "maintenance policy (" + e.getMessage() + "): maxFragments >= 1, "
            + "smallFragmentRows >= 0, maxSmallShare from 0 to 1, targetRowsPerFragment >= 1, "
            + "retention a duration such as 1h");
      }
    }
  }

  /**
   * What maintenance did.
   *
   * @param compacted whether it compacted (else the fragments were within the policy)
   * @param versionsRemoved old versions removed
   */
  public record Outcome(boolean compacted, int fragmentsBefore, int fragmentsAfter,
      long versionsRemoved, long bytesRemoved) {
    /** {@code compacted 40 -> 2 fragments, 38 old versions removed}, or null for nothing. */
    public String summary() {
      if (!compacted && versionsRemoved == 0) {
        return null;
      }
      return (compacted ? "compacted " + fragmentsBefore + " -> " + fragmentsAfter
          + " fragments" : "no compaction needed (" + fragmentsBefore + " fragments)") + ", "
          + versionsRemoved + " old versions removed";
    }
  }

  /**
   * The oldest version to keep: the newest one created before {@code cutoffMillis} (it was the
   * view until a later one replaced it, within the retention), or {@code null} when nothing is
   * old enough to remove.
   */
  static Long oldestKept(List<org.lance.Version> versions, long cutoffMillis) {
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
   * rows: too many fragments, where compaction would remove at least a third of them, or mostly
   * small ones. Fragments that are full already (a view refreshed with a small
   * {@code max_rows_per_fragment}) are left as they are.
   */
  static boolean needsCompaction(List<Long> fragmentRows, Policy p, long target) {
    int n = fragmentRows.size();
    if (n <= 1) {
      return false;
    }
    long total = fragmentRows.stream().mapToLong(Long::longValue).sum();
    long ideal = Math.max(1, (total + target - 1) / target);
    if (n > p.maxFragments() && n > ideal + ideal / 2) {
      return true;
    }
    long smallBelow = Math.min(p.smallFragmentRows(), target / 2);
    long small = fragmentRows.stream().filter(r -> r < smallBelow).count();
    return n >= 8 && (double) small / n > p.maxSmallShare();
  }

  /**
   * Maintains the table at {@code uri}.
   *
   * @param force compact whenever it would lower the fragment count (OPTIMIZE MATERIALIZED VIEW)
   * @param maxRowsPerFragment the refresh's {@code max_rows_per_fragment}, or {@code null}:
   *     compaction never writes larger fragments than the refresh asked for
   */
  public static Outcome run(String uri, Map<String, String> storageOptions, Policy p,
      boolean force, Integer maxRowsPerFragment) {
    long target = maxRowsPerFragment == null ? p.targetRowsPerFragment()
        : Math.min(p.targetRowsPerFragment(), maxRowsPerFragment);
    ReadOptions ro = new ReadOptions.Builder().setStorageOptions(storageOptions).build();
    try (BufferAllocator a = new RootAllocator()) {
      Dataset ds = Dataset.open(a, uri, ro);
      try {
        List<Long> rows = ds.getFragments().stream()
            .map(f -> f.metadata().getNumRows()).toList();
        int before = rows.size();
        long total = rows.stream().mapToLong(Long::longValue).sum();
        boolean compact = force ? before > Math.max(1, (total + target - 1) / target)
            : needsCompaction(rows, p, target);
        if (compact) {
          ds.compact(CompactionOptions.builder()
              .withTargetRowsPerFragment(target)
              .withMaterializeDeletions(true).build());
          Dataset compacted = Dataset.open(a, uri, ro); // the compaction's version
          ds.close();
          ds = compacted;
        }
        int after = compact ? ds.getFragments().size() : before;
        Long keepFrom = oldestKept(ds.listVersions(), System.currentTimeMillis()
            - p.retention().toMillis());
        if (keepFrom == null) {
          return new Outcome(compact, before, after, 0, 0);
        }
        RemovalStats removed = ds.cleanupWithPolicy(CleanupPolicy.builder()
            .withBeforeVersion(keepFrom).build());
        return new Outcome(compact, before, after, removed.getOldVersions(),
            removed.getBytesRemoved());
      } finally {
        ds.close();
      }
    }
  }
}
