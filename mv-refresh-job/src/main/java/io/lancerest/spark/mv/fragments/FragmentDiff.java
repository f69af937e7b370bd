package io.lancerest.spark.mv.fragments;

import io.lancerest.spark.connector.PoolShutdown;
import io.lancerest.spark.connector.read.RowIdSequence;
import io.lancerest.spark.connector.read.SafeLanceScan;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.UInt8Vector;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * How the fragments of a Lance dataset differ between two versions.
 *
 * <p>Lance data and deletion files are immutable and a fragment id is never reused for other
 * data, so a fragment whose metadata is equal at both versions holds the same rows, with the
 * same values and row ids: it needs no reading at all. Of the others:
 * <ul>
 *   <li>{@link #deletionsChanged}: same data files, rows and row-id sequence, another deletion
 *       file. Only the set of live rows changed (rows deleted, or un-deleted by a restore); the
 *       values of the rows live at both versions did not;</li>
 *   <li>{@link #rescan}: fragments of the newer version that are new or whose data changed
 *       (appends, in-place updates, compaction output);</li>
 *   <li>{@link #replaced}: fragments of the older version whose data changed or that are gone
 *       (compaction input, fragments emptied by deletes).</li>
 * </ul>
 */
public final class FragmentDiff {
  /** Fragment ids of the newer version to read again. */
  public final List<Integer> rescan;
  /** Fragment ids of the older version whose rows were replaced or removed. */
  public final List<Integer> replaced;
  /** Fragment ids at both versions whose only difference is the deletion file. */
  public final List<Integer> deletionsChanged;
  /** Physical rows of the {@link #rescan} fragments. */
  public final long rescanRows;
  /** Fragments of the newer version. */
  public final int fragmentsNow;
  /** The older version's metadata of the {@link #replaced} and {@link #deletionsChanged}. */
  private final Map<Integer, FragmentMetadata> then;
  /** The newer version's metadata of the {@link #deletionsChanged}. */
  private final Map<Integer, FragmentMetadata> now;

  private FragmentDiff(List<Integer> rescan, List<Integer> replaced,
      List<Integer> deletionsChanged, long rescanRows, int fragmentsNow,
      Map<Integer, FragmentMetadata> then, Map<Integer, FragmentMetadata> now) {
    this.then = then;
    this.now = now;
    this.rescan = Collections.unmodifiableList(rescan);
    this.replaced = Collections.unmodifiableList(replaced);
    this.deletionsChanged = Collections.unmodifiableList(deletionsChanged);
    this.rescanRows = rescanRows;
    this.fragmentsNow = fragmentsNow;
  }

  /** The difference from {@code then} (older version) to {@code now}. */
  public static FragmentDiff between(List<FragmentMetadata> then, List<FragmentMetadata> now) {
    Map<Integer, FragmentMetadata> before = new HashMap<>();
    for (FragmentMetadata f : then) {
      before.put(f.getId(), f);
    }
    Map<Integer, FragmentMetadata> thenMeta = new HashMap<>(before);
    List<Integer> rescan = new ArrayList<>();
    List<Integer> replaced = new ArrayList<>();
    List<Integer> deletions = new ArrayList<>();
    Map<Integer, FragmentMetadata> nowMeta = new HashMap<>();
    long rows = 0;
    for (FragmentMetadata f : now) {
      FragmentMetadata old = before.remove(f.getId());
      if (f.equals(old)) {
        continue;
      }
      if (old != null && sameData(old, f)) {
        deletions.add(f.getId());
        nowMeta.put(f.getId(), f);
      } else {
        rescan.add(f.getId());
        rows += f.getPhysicalRows();
        if (old != null) {
          replaced.add(old.getId());
        }
      }
    }
    replaced.addAll(before.keySet());
    Collections.sort(replaced);
    java.util.Set<Integer> involved = new java.util.HashSet<>(replaced);
    involved.addAll(deletions);
    thenMeta.keySet().retainAll(involved);
    return new FragmentDiff(rescan, replaced, deletions, rows, now.size(), thenMeta, nowMeta);
  }

  /**
   * The difference from {@code then} to {@code now} when the commits between them are known
   * ({@link SourceHistory.Touched}): only the fragments they touched are compared, each read by
   * id from {@code then}, so the older version's fragments are not all listed. {@code null} when
   * what the commits say does not add up to {@code now} (the caller then compares every
   * fragment): a fragment neither touched nor written that is new, or a count of fragments that
   * does not match the older version's manifest.
   */
  public static FragmentDiff touched(org.lance.Dataset then, List<FragmentMetadata> now,
      SourceHistory.Touched touched) {
    Map<Integer, FragmentMetadata> before = new HashMap<>();
    for (int id : touched.ids()) {
      FragmentMetadata f = fragment(then, id);
      if (f != null) {
        before.put(id, f);
      }
    }
    List<FragmentMetadata> thenSide = new ArrayList<>(before.values());
    List<FragmentMetadata> nowSide = new ArrayList<>();
    int existedThen = 0;
    for (FragmentMetadata f : now) {
      boolean written = !f.getFiles().isEmpty()
          && touched.written().contains(f.getFiles().get(0).getPath());
      if (touched.ids().contains(f.getId())) {
        if (!before.containsKey(f.getId()) && !written) {
          return null; // made and changed in between, but its files were not written then
        }
        nowSide.add(f);
      } else if (written) {
        nowSide.add(f);
      }
      if (before.containsKey(f.getId()) || !written && !touched.ids().contains(f.getId())) {
        existedThen++;
      }
    }
    java.util.Set<Integer> nowIds = new java.util.HashSet<>();
    now.forEach(f -> nowIds.add(f.getId()));
    long removed = before.keySet().stream().filter(id -> !nowIds.contains(id)).count();
    if (then.getVersion().getManifestSummary().getTotalFragments() != existedThen + removed) {
      return null;
    }
    FragmentDiff d = between(thenSide, nowSide);
    return new FragmentDiff(new ArrayList<>(d.rescan), new ArrayList<>(d.replaced),
        new ArrayList<>(d.deletionsChanged), d.rescanRows, now.size(), d.then, d.now);
  }

  /** Fragment {@code id} of {@code ds}, or {@code null} when it has none of that id. */
  private static FragmentMetadata fragment(org.lance.Dataset ds, int id) {
    try {
      Fragment f = ds.getFragment(id);
      return f == null ? null : f.metadata();
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** The metadata of {@code fragments}. */
  public static List<FragmentMetadata> metadata(List<Fragment> fragments) {
    List<FragmentMetadata> out = new ArrayList<>(fragments.size());
    for (Fragment f : fragments) {
      out.add(f.metadata());
    }
    return out;
  }

  /** Same data files (every field of them), rows and row-id sequence: deletions aside. */
  static boolean sameData(FragmentMetadata a, FragmentMetadata b) {
    return a.getPhysicalRows() == b.getPhysicalRows() && a.getFiles().equals(b.getFiles())
        && Objects.equals(a.getRowIdMeta(), b.getRowIdMeta());
  }

  /** Whether nothing differs. */
  public boolean isEmpty() {
    return rescan.isEmpty() && replaced.isEmpty() && deletionsChanged.isEmpty();
  }

  @Override
  public String toString() {
    return rescan.size() + " new or rewritten, " + deletionsChanged.size() + " with new "
        + "deletions, " + replaced.size() + " replaced or removed, of " + fragmentsNow
        + " fragments";
  }

  /**
   * The row ids that left the fragments this diff compares, and the fragments to read again
   * because rows came back.
   *
   * @param ids the row ids {@code then} had in {@link #replaced} fragments, plus those deleted
   *     since from {@link #deletionsChanged} fragments (and every id {@code then} had in a
   *     fragment of {@link #rescanAgain})
   * @param rescanAgain fragments of {@link #deletionsChanged} that gained rows back (a restore
   *     of an older deletion file): read them again like rewritten ones
   * @param rescanAgainRows the physical rows of {@code rescanAgain}, to add to {@link
   *     #rescanRows}
   * @param cachedSets live-id sets taken from {@link LiveRowIds} instead of a scan
   * @param fragmentsScanned fragments whose row ids had to be scanned (their deletion files
   *     could not be read directly)
   */
  public record Departed(Roaring64NavigableMap ids, List<Integer> rescanAgain,
      long rescanAgainRows, int cachedSets, int fragmentsScanned) {}

  /** Threads scanning row ids at once in {@link #departed}. */
  private static final int SCAN_THREADS = 2;

  /**
   * What {@link Departed} says, from {@code then} (the older version this diff was made from)
   * and {@code now}. The rows that left a fragment which only gained deletions are the offsets
   * its deletion file has now and had not then, mapped to row ids through its row-id sequence;
   * the rows of a replaced fragment are its sequence less its deleted offsets
   * ({@link FragmentRowIds}): no scan at all, where the deletion files can be read directly
   * ({@link DeletionVectors}). Otherwise a fragment's live row ids are scanned at both versions
   * (up to a million ids each for a large fragment that lost a few rows to an UPDATE); a
   * fragment's live ids scanned by an earlier refresh of the catalog (the newer side then is
   * the older side now) come from {@link LiveRowIds}. The remaining scans are independent and
   * run on {@value #SCAN_THREADS} threads; lance-core's {@code Dataset} takes only a read lock
   * to start a scan.
   */
  public Departed departed(org.lance.Dataset then, org.lance.Dataset now, LiveRowIds cache,
      DeletionVectors.Reader deletions) throws Exception {
    Roaring64NavigableMap old = new Roaring64NavigableMap();
    List<Integer> scanReplaced = new ArrayList<>();
    for (int f : replaced) {
      Roaring64NavigableMap ids = FragmentRowIds.live(then.uri(), this.then.get(f), deletions);
      if (ids == null) {
        scanReplaced.add(f);
      } else {
        old.or(ids);
      }
    }
    List<Callable<Roaring64NavigableMap>> scans = new ArrayList<>();
    scans.add(() -> rowIds(then, scanReplaced));
    int scanning = scanReplaced.isEmpty() ? 0 : 1;
    int cached = 0;
    List<Integer> again = new ArrayList<>();
    long againRows = 0;
    List<Integer> scanned = new ArrayList<>();
    for (int f : deletionsChanged) {
      FragmentRowIds.Deletions d = FragmentRowIds.between(now.uri(), this.then.get(f),
          this.now.get(f), deletions);
      Roaring64NavigableMap thenLive = d != null && d.restored()
          ? FragmentRowIds.live(then.uri(), this.then.get(f), deletions) : null;
      if (d != null && (!d.restored() || thenLive != null)) {
        if (d.restored()) {
          again.add(f);
          againRows += this.now.get(f).getPhysicalRows();
          old.or(thenLive);
        } else {
          old.or(d.deleted());
        }
        continue;
      }
      scanned.add(f);
      FragmentMetadata[] sides = {this.then.get(f), this.now.get(f)};
      org.lance.Dataset[] at = {then, now};
      for (int side = 0; side < 2; side++) {
        FragmentMetadata m = sides[side];
        Roaring64NavigableMap have = side == 0 && m.getDeletionFile() == null
            ? FragmentRowIds.all(m) : null;
        if (have == null) {
          have = cache.cached(at[side].uri(), m);
          cached += have == null ? 0 : 1;
        }
        if (have != null) {
          Roaring64NavigableMap k = have;
          scans.add(() -> k);
        } else {
          org.lance.Dataset ds = at[side];
          scans.add(() -> cache.scanned(ds.uri(), m, rowIds(ds, List.of(m.getId()))));
          scanning++;
        }
      }
    }
    List<Roaring64NavigableMap> sets = run(scans, scanning);
    old.or(sets.get(0));
    for (int i = 0; i < scanned.size(); i++) {
      Roaring64NavigableMap before = sets.get(1 + 2 * i);
      Roaring64NavigableMap after = sets.get(2 + 2 * i);
      Roaring64NavigableMap gone = new Roaring64NavigableMap();
      gone.or(before);
      gone.andNot(after);
      // |after| > |before ∩ after|: some id of after is not in before
      if (after.getLongCardinality() > before.getLongCardinality() - gone.getLongCardinality()) {
        // Rows came back (a restore): read the fragment again like a rewritten one.
        again.add(scanned.get(i));
        againRows += this.now.get(scanned.get(i)).getPhysicalRows();
        old.or(before);
      } else {
        old.or(gone);
      }
    }
    return new Departed(old, Collections.unmodifiableList(again), againRows, cached,
        scanReplaced.size() + scanned.size());
  }

  /**
   * Every row id of a fragment that has no deletion file, from its inline row-id sequence
   * ({@link RowIdSequence}); {@code null} when that cannot be told without a scan (deletions, an
   * external or unreadable sequence).
   */
  static Roaring64NavigableMap allRowIds(FragmentMetadata f) {
    return f == null || f.getDeletionFile() != null ? null : FragmentRowIds.all(f);
  }

  /** Calls {@code scans}, on threads when {@code scanning} of them read a dataset. */
  private static List<Roaring64NavigableMap> run(List<Callable<Roaring64NavigableMap>> scans,
      int scanning) throws Exception {
    List<Roaring64NavigableMap> out = new ArrayList<>();
    if (scanning < 2) {
      for (Callable<Roaring64NavigableMap> c : scans) {
        out.add(c.call());
      }
      return out;
    }
    ExecutorService pool = Executors.newFixedThreadPool(Math.min(SCAN_THREADS, scans.size()),
        r -> {
          Thread t = new Thread(r, "fragment-diff-scan");
          t.setDaemon(true);
          return t;
        });
    try {
      List<Future<Roaring64NavigableMap>> futures = new ArrayList<>();
      for (Callable<Roaring64NavigableMap> c : scans) {
        futures.add(pool.submit(c));
      }
      for (Future<Roaring64NavigableMap> f : futures) {
        try {
          out.add(f.get());
        } catch (ExecutionException e) {
          if (e.getCause() instanceof Exception cause) {
            throw cause;
          }
          throw e;
        }
      }
    } finally {
      // A scan still running after another one failed reads datasets and an allocator that
      // the caller closes as soon as this returns: wait for it to end first.
      if (!PoolShutdown.awaitEnd(pool, 5, java.util.concurrent.TimeUnit.MINUTES)) {
        throw new IllegalStateException("A row-id scan of the fragment diff did not end "
            + "within 5 minutes");
      }
    }
    return out;
  }

  /**
   * Rows per batch of a row-id scan: a whole default-sized fragment in one batch. A row-id-only
   * scan holds 8 bytes a row, and with the default (8,192 rows) a million-row fragment crosses
   * into Java 123 times; one large batch makes the two scans of a fragment that gained
   * deletions faster (FragmentDiffMeasure; figures in docs/benchmarks.md).
   */
  private static final long ROW_ID_BATCH = 1L << 20;

  /**
   * The row ids of the live rows of {@code fragments} in {@code dataset} (stable row ids). Only
   * Lance's row-id metadata is read, never a data file; fragments a compaction rewrote have
   * their ids mapped from row addresses ({@link SafeLanceScan}), which lance-core computes in
   * linear time where its own {@code _rowid} takes quadratic time.
   */
  public static Roaring64NavigableMap rowIds(org.lance.Dataset dataset, List<Integer> fragments)
      throws Exception {
    Roaring64NavigableMap ids = new Roaring64NavigableMap();
    if (fragments.isEmpty()) {
      return ids;
    }
    SafeLanceScan.scan(dataset, SafeLanceScan.Request.of(fragments, List.of()).withRowIds()
        .withBatchSize(ROW_ID_BATCH), b -> {
          FieldVector v = b.column("_rowid");
          if (v != null) {
            addLongs(v, b.rowCount(), ids);
          } else {
            for (int i = 0; i < b.rowCount(); i++) {
              ids.addLong(b.rowId(i));
            }
          }
        });
    return ids;
  }

  /**
   * Adds the values of a 64-bit integer vector (no nulls expected) to {@code ids}. A stable
   * row-id scan yields long runs of consecutive ids (a fragment's ids are mostly one range), and
   * adding a run as one range is far cheaper than adding its ids one by one: for the million
   * rows of a fragment that gained a deletion, a per-id loop would be most of the fragment diff.
   */
  public static void addLongs(FieldVector v, int rows, Roaring64NavigableMap ids) {
    if (rows == 0) {
      return;
    }
    long start = value(v, 0);
    long prev = start;
    for (int i = 1; i < rows; i++) {
      long x = value(v, i);
      if (x != prev + 1 || prev == -1L) {
        addRun(ids, start, prev);
        start = x;
      }
      prev = x;
    }
    addRun(ids, start, prev);
  }

  private static long value(FieldVector v, int i) {
    if (v instanceof UInt8Vector u) {
      return u.get(i);
    }
    if (v instanceof BigIntVector b) {
      return b.get(i);
    }
    return ((Number) v.getObject(i)).longValue();
  }

  /** Adds {@code first..last} (inclusive, {@code first <= last} unsigned) to {@code ids}. */
  private static void addRun(Roaring64NavigableMap ids, long first, long last) {
    if (first == last) {
      ids.addLong(first);
    } else if (last == -1L) {
      // the range end is exclusive and last + 1 would wrap to 0
      ids.addRange(first, last);
      ids.addLong(last);
    } else {
      ids.addRange(first, last + 1);
    }
  }
}
