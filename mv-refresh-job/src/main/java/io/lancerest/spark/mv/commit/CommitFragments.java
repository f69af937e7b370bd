package io.lancerest.spark.mv.commit;

import io.lancerest.spark.connector.PoolShutdown;
import io.lancerest.spark.connector.read.SafeLanceScan;
import io.lancerest.spark.mv.rowindex.FragmentSourceRanges;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.arrow.memory.BufferAllocator;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.schema.LanceField;

/**
 * The row side of a {@link ViewCommit}: the fragments of the new version (the read version's,
 * less deleted rows and removed fragments, plus the new ones under fresh ids) with their source
 * ranges.
 */
final class CommitFragments {
  /** Fragments with deletions at once: each writes a deletion file, and they are independent. */
  private static final int DELETE_THREADS = 2;

  /**
   * The fragments an Overwrite commits.
   *
   * @param dropped the fragments this commit drops, whose source id indexes go once it has
   *     landed
   * @param ranges the source range of each fragment that has one, by final id
   */
  record Applied(List<FragmentMetadata> fragments, long deleted, long added,
      List<FragmentMetadata> dropped, Map<Integer, FragmentSourceRanges.Entry> ranges) {}

  private final String location;
  private final long readVersion;
  private final TreeSet<Long> deleteAddresses;
  private final String deletePredicate;
  private final boolean replaceAllRows;
  /** Fragments dropped whole (a compaction replaces them with new ones). */
  private final TreeSet<Integer> removeFragments;
  private final List<FragmentMetadata> newFragments;
  /** The source row id range of each new fragment, or {@code null} when not known. */
  private final List<FragmentSourceRanges.Range> newRanges;

  CommitFragments(String location, long readVersion, TreeSet<Long> deleteAddresses,
      String deletePredicate, boolean replaceAllRows, TreeSet<Integer> removeFragments,
      List<FragmentMetadata> newFragments, List<FragmentSourceRanges.Range> newRanges) {
    this.location = location;
    this.readVersion = readVersion;
    this.deleteAddresses = new TreeSet<>(deleteAddresses);
    this.deletePredicate = deletePredicate;
    this.replaceAllRows = replaceAllRows;
    this.removeFragments = new TreeSet<>(removeFragments);
    this.newFragments = List.copyOf(newFragments);
    this.newRanges = new ArrayList<>(newRanges);
  }

  /** Whether the commit replaces every row of the view. */
  boolean replacesAll() {
    return replaceAllRows;
  }

  /** The fragments this commit adds, as the caller gave them (before their ids are placed). */
  List<FragmentMetadata> newFragments() {
    return newFragments;
  }

  /**
   * The fragments of the new version over {@code ds} (the read version): deletion files are
   * written for the rows deleted, nothing is committed.
   */
  Applied apply(Dataset ds, BufferAllocator allocator, int firstNewId) {
    checkFieldIdsAreDense(ds);
    TreeMap<Integer, List<Integer>> offsets = offsetsByFragment(ds, allocator);
    List<FragmentMetadata> fragments = new ArrayList<>();
    long deleted = 0;
    List<FragmentMetadata> dropped = new ArrayList<>();
    if (!replaceAllRows) {
      TreeSet<Integer> toRemove = new TreeSet<>(removeFragments);
      List<Fragment> all = ds.getFragments();
      Map<Integer, FragmentMetadata> afterDeletes = deleteRows(all, offsets);
      for (Fragment f : all) {
        if (toRemove.remove(f.getId())) {
          dropped.add(f.metadata());
          if (offsets.remove(f.getId()) != null) {
            throw new ViewCommitException("Fragment " + f.getId() + " of view table '"
                + location + "' is both removed and has rows deleted in one commit");
          }
          deleted += f.metadata().getNumRows();
          continue;
        }
        if (offsets.remove(f.getId()) == null) {
          fragments.add(f.metadata());
          continue;
        }
        long before = f.metadata().getNumRows();
        FragmentMetadata updated = afterDeletes.get(f.getId());
        // lance-core returns null when every row of the fragment is deleted: drop it.
        long after = updated == null ? 0 : updated.getNumRows();
        deleted += before - after;
        if (updated != null) {
          fragments.add(updated);
        } else {
          dropped.add(f.metadata());
        }
      }
      if (!offsets.isEmpty()) {
        throw new ViewCommitException("Row addresses name fragments " + offsets.keySet()
            + " that are not in view table '" + location + "' at version " + readVersion);
      }
      if (!toRemove.isEmpty()) {
        throw new ViewCommitException("Fragments " + toRemove + " to remove are not in view "
            + "table '" + location + "' at version " + readVersion);
      }
    } else {
      deleted = ds.countRows();
      ds.getFragments().forEach(f -> dropped.add(f.metadata()));
    }
    long added = 0;
    // Ranges of the kept fragments stay (their files are the same); those of fragments no
    // longer in the view drop out with them.
    Map<Integer, FragmentSourceRanges.Entry> recorded = FragmentSourceRanges.parse(
        ds.getSchema().getCustomMetadata() == null ? null
            : ds.getSchema().getCustomMetadata().get(FragmentSourceRanges.KEY));
    Map<Integer, FragmentSourceRanges.Entry> ranges = new TreeMap<>();
    if (!replaceAllRows) {
      for (FragmentMetadata f : fragments) {
        FragmentSourceRanges.Entry e = FragmentSourceRanges.valid(recorded, f);
        if (e != null) {
          ranges.put(f.getId(), e);
        }
      }
    }
    // a fragment without an entry may have lost it (over the entry cap, or to an engine that
    // did not know indexes): its index folder, if any, goes too
    dropped.removeIf(f -> {
      FragmentSourceRanges.Entry e = FragmentSourceRanges.valid(recorded, f);
      return e != null && !e.indexed();
    });
    // Fragment.write() numbers every new fragment from 0. Overwrite keeps the given ids, and
    // duplicate ids corrupt the table (rows vanish from scans), so give them fresh ones: also
    // above every id an index carried over names (firstNewId), or the index would claim them.
    int nextId = Math.max(firstNewId,
        ds.getFragments().stream().mapToInt(Fragment::getId).max().orElse(-1) + 1);
    for (int i = 0; i < newFragments.size(); i++) {
      FragmentMetadata f = newFragments.get(i);
      FragmentMetadata placed = new FragmentMetadata(nextId++, f.getFiles(),
          f.getPhysicalRows(), f.getDeletionFile(), f.getRowIdMeta());
      fragments.add(placed);
      FragmentSourceRanges.Range r = newRanges.get(i);
      if (r != null) {
        ranges.put(placed.getId(), new FragmentSourceRanges.Entry(r.min(), r.max(),
            FragmentSourceRanges.fileTag(placed), r.indexed()));
      }
      added += f.getNumRows();
    }
    return new Applied(fragments, deleted, added, dropped, ranges);
  }

  /**
   * Each fragment of {@code all} that {@code offsets} names, with those rows deleted (new
   * deletion files written, nothing committed; {@code null} when no row is left), by id.
   */
  private Map<Integer, FragmentMetadata> deleteRows(List<Fragment> all,
      Map<Integer, List<Integer>> offsets) {
    List<Fragment> touched = new ArrayList<>();
    for (Fragment f : all) {
      if (offsets.containsKey(f.getId()) && !removeFragments.contains(f.getId())) {
        touched.add(f);
      }
    }
    Map<Integer, FragmentMetadata> out = new java.util.HashMap<>();
    if (touched.size() < 2 * DELETE_THREADS) {
      for (Fragment f : touched) {
        out.put(f.getId(), f.deleteRows(offsets.get(f.getId())));
      }
      return out;
    }
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors
        .newFixedThreadPool(DELETE_THREADS, r -> {
          Thread t = new Thread(r, "view-commit-deletes");
          t.setDaemon(true);
          return t;
        });
    try {
      List<java.util.concurrent.Future<FragmentMetadata>> done = new ArrayList<>();
      for (Fragment f : touched) {
        done.add(pool.submit(() -> f.deleteRows(offsets.get(f.getId()))));
      }
      for (int i = 0; i < touched.size(); i++) {
        try {
          out.put(touched.get(i).getId(), done.get(i).get());
        } catch (java.util.concurrent.ExecutionException e) {
          throw e.getCause() instanceof RuntimeException re ? re
              : new ViewCommitException("Deleting rows of fragment " + touched.get(i).getId()
                  + " of view table '" + location + "' failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new ViewCommitException("Interrupted while deleting rows of view table '"
              + location + "'; nothing was committed", e);
        }
      }
      return out;
    } finally {
      // deletion files being written use the dataset the caller closes next
      PoolShutdown.awaitEnd(pool, 5, java.util.concurrent.TimeUnit.MINUTES);
    }
  }

  /**
   * {@code Overwrite} re-assigns Lance field ids from the Arrow schema in depth-first order. Kept
   * data files reference the old ids, so this is only safe when the old ids are exactly that
   * order (true unless columns were dropped or added after creation).
   */
  private void checkFieldIdsAreDense(Dataset ds) {
    if (replaceAllRows) {
      return;
    }
    int[] next = {0};
    boolean dense = ds.getLanceSchema().fields().stream().allMatch(f -> dense(f, next));
    if (!dense) {
      throw new ViewCommitException("View table '" + location + "' has non-sequential field "
          + "ids (a column was added or dropped after it was created), so its fragments cannot "
          + "be carried into an atomic overwrite. Rebuild the view (DROP and CREATE "
          + "MATERIALIZED VIEW) to restore incremental refresh.");
    }
  }

  private static boolean dense(LanceField f, int[] next) {
    if (f.getId() != next[0]++) {
      return false;
    }
    return f.getChildren().stream().allMatch(c -> dense(c, next));
  }

  private TreeMap<Integer, List<Integer>> offsetsByFragment(Dataset ds, BufferAllocator alloc) {
    TreeSet<Long> addresses = new TreeSet<>(deleteAddresses);
    if (deletePredicate != null && !replaceAllRows) {
      addresses.addAll(addressesMatching(ds, alloc, deletePredicate));
    }
    TreeMap<Integer, List<Integer>> out = new TreeMap<>();
    for (long a : addresses) {
      out.computeIfAbsent((int) (a >>> 32), k -> new ArrayList<>()).add((int) a);
    }
    return out;
  }

  private List<Long> addressesMatching(Dataset ds, BufferAllocator alloc, String predicate) {
    String firstColumn = ds.getSchema().getFields().get(0).getName();
    List<Long> out = new ArrayList<>();
    try {
      SafeLanceScan.scan(ds, SafeLanceScan.Request.of(null, List.of(firstColumn))
          .withFilter(predicate).withRowAddresses(), b -> {
            if (!b.filtered()) {
              // lance-core cannot filter fragments a compaction rewrote in linear time, and a
              // Lance predicate cannot be evaluated here
              throw new ViewCommitException("Cannot evaluate delete predicate '" + predicate
                  + "' on view table '" + location + "': it has fragments rewritten by a "
                  + "compaction; delete by row address instead");
            }
            for (int i = 0; i < b.rowCount(); i++) {
              out.add(b.rowAddress(i));
            }
          });
    } catch (ViewCommitException e) {
      throw e;
    } catch (Exception e) {
      throw new ViewCommitException("Cannot evaluate delete predicate '" + predicate
          + "' on view table '" + location + "': " + e.getMessage(), e);
    }
    return out;
  }
}
