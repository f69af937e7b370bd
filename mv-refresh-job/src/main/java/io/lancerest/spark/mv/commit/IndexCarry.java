package io.lancerest.spark.mv.commit;

import static io.lancerest.spark.mv.commit.LanceErrors.message;

import io.lancerest.spark.connector.LanceLocation;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.index.Index;
import org.lance.index.IndexType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The indexes a {@link ViewCommit} carries over its Overwrite (which drops every index of the
 * table): gathered from the read version plus those an earlier commit still owes, and chosen and
 * recorded ({@link IndexRecord}) in the Overwrite's own schema metadata ({@link #KEY}); once the
 * Overwrite landed, {@link #carry} registers them again ({@link IndexRegistration}) and brings
 * them up to date ({@link IndexUpdate}), each a commit of its own. Why every guarantee holds:
 * <ul>
 *   <li>data, watermark, metadata and config still land together, in the Overwrite alone; a
 *       refresh killed at any point leaves the old view or the new one, whose data is
 *       complete;</li>
 *   <li>killed between the Overwrite and the registration, the view is correct but its indexes
 *       are unlisted (a search scans); the record makes the view's next commit (refresh,
 *       maintenance, a retry) carry and register them, or report them lost when a cleanup
 *       removed their files;</li>
 *   <li>the registration never loses another writer's commit: a CreateIndex that meets a
 *       concurrent Append or index commit is rebased by lance-core (the appended fragments are
 *       in no bitmap, so they are searched flat), and one that meets a concurrent Overwrite
 *       (another engine commit, which owes the same segments and registers them itself) fails
 *       and is not retried. Its answer lost, the segments are found registered and it is not
 *       applied twice. Optimizing an index is lance-core's own commit, which rebases or
 *       conflicts the same way, and a conflict leaves the new rows to be indexed by the next
 *       commit.</li>
 * </ul>
 *
 * <p>Measured on lance-core 4.0.0: a segment registered again with its fragment bitmap as it was
 * answers searches correctly, since lance masks the rows deleted from kept fragments and those
 * of fragments the bitmap names that are no longer in the table; fragments in no bitmap are
 * searched flat. So a fragment id must never be reused while a carried bitmap names it ({@link
 * #firstNewFragmentId}). Bringing an index up to date: scalar and full-text indexes merge the new
 * rows in ({@code optimizeIndices}); a vector index gets a delta segment for them (merging or
 * retraining an IVF index of fragments with deletions fails in lance-core 4.0.0 with "batch
 * .num_rows() != chunk.len()"), and is built again from its {@link IndexRecipe} past {@link
 * #MAX_VECTOR_SEGMENTS} segments, or when a commit replacing every row brings more than twice
 * the rows it covered.
 */
final class IndexCarry {
  // The commit's own log category: these lines are part of the commit's story.
  private static final Logger LOG = LoggerFactory.getLogger(ViewCommit.class);
  /**
   * Schema metadata of every Overwrite that carries indexes: {@code {"version": v, "indexes":
   * [...]}}, the segments version {@code v} (that Overwrite) must have registered. Whichever
   * commit comes next registers those no version after {@code v} did.
   */
  static final String KEY = "lancerest::view::carried_indexes";
  /**
   * Delta segments a vector index may have before a commit builds it again from its recipe:
   * each segment is searched on its own, so a search costs about one more probe set per segment
   * (8 keeps it within a small factor of a fresh index while a rebuild, which retrains the
   * centroids over every row, stays rare: one in 8 refreshes at most).
   */
  static final int MAX_VECTOR_SEGMENTS = 8;

  private final String location;
  private final long readVersion;
  /** Every user index segment of the read version plus those still owed, by uuid. */
  private final Map<UUID, Index> candidates = new LinkedHashMap<>();
  /** The candidates an earlier Overwrite carried and no version registered yet. */
  private final Set<UUID> owed = new HashSet<>();
  /** Owed segments whose files a cleanup removed, by index name: neither recorded nor registered. */
  private final Map<String, List<Index>> gone = new TreeMap<>();
  /** Live rows each listed index covered at the read version (what its model has seen). */
  private final Map<String, Long> modelRows = new java.util.HashMap<>();
  private Map<String, String> config = Map.of();
  /** Lance field ids of the read version's vector (fixed-size list) columns. */
  private final Set<Integer> vectorFields = new HashSet<>();
  /** What the Overwrite carries (after {@link #select}). */
  private List<Index> carried = List.of();
  /** Vector indexes the commit builds again from their recipe (most rows new to the model). */
  private final Set<String> retrain = new HashSet<>();

  IndexCarry(String location, long readVersion) {
    this.location = location;
    this.readVersion = readVersion;
  }

  /** Gathers the segments to carry from {@code ds}, the read version. */
  void gather(Dataset ds) {
    candidates.clear();
    owed.clear();
    gone.clear();
    modelRows.clear();
    Set<String> listed = new HashSet<>();
    for (Index i : ds.getIndexes()) {
      if (isUser(i)) {
        candidates.put(i.uuid(), i);
        listed.add(i.name());
      }
    }
    listed.forEach(name -> modelRows.put(name, IndexCoverage.of(ds, name).indexedRows()));
    IndexRecord rec = IndexRecord.in(ds);
    if (rec != null && rec.version() <= ds.version()) {
      // An index of the same name listed now is that index (registered since, then merged or
      // rebuilt under a new uuid) or one the user created again: either way it supersedes the
      // recorded segments, and registering both would make lance refuse the CreateIndex.
      Map<UUID, Index> missing = new LinkedHashMap<>();
      rec.indexes().forEach(i -> {
        if (!candidates.containsKey(i.uuid()) && !listed.contains(i.name())) {
          missing.put(i.uuid(), i);
        }
      });
      // registered by a later version, then dropped: not owed any more
      for (long v = rec.version() + 1; v <= ds.version() && !missing.isEmpty(); v++) {
        try (Dataset at = ds.checkoutVersion(v)) {
          at.getIndexes().forEach(i -> missing.remove(i.uuid()));
        } catch (Exception e) { // lance-core's IOException arrives undeclared
          // Removed by a cleanup: whatever it registered cannot be told, and the files of
          // segments no kept version names are gone with it; owe nothing rather than block
          // every later commit on a version that will never be read again.
          LOG.info("View table '{}': version {} is gone ({}); the indexes recorded by version "
              + "{} are no longer owed", LanceLocation.withoutUserInfo(location), v,
              message(e), rec.version());
          missing.clear();
        }
      }
      String root = location;
      missing.forEach((uuid, i) -> {
        if (filesGone(root, i)) {
          gone.computeIfAbsent(i.name(), k -> new ArrayList<>()).add(i);
        } else {
          candidates.put(uuid, i);
          owed.add(uuid);
        }
      });
    }
    config = ds.getConfig();
    vectorFields.clear();
    ds.getLanceSchema().fields().forEach(f -> {
      if (f.getType() instanceof org.apache.arrow.vector.types.pojo.ArrowType.FixedSizeList) {
        vectorFields.add(f.getId());
      }
    });
  }

  /**
   * Whether the files of owed segment {@code i} are known to be gone: a cleanup removes them
   * once no kept version names the segment. Checked where the table's folder can be listed (a
   * local file system); elsewhere lance-core 4.0.0 has no call to look, so the segment is
   * registered and checked through lance-core afterwards ({@link IndexUpdate}).
   */
  private static boolean filesGone(String location, Index i) {
    java.nio.file.Path root = io.lancerest.spark.mv.fragments.DeletionVectors.localRoot(location);
    if (root == null) {
      return false;
    }
    java.nio.file.Path dir = root.resolve("_indices").resolve(i.uuid().toString());
    try (var files = java.nio.file.Files.list(dir)) {
      return files.findAny().isEmpty();
    } catch (java.io.IOException e) {
      return true; // no such folder
    }
  }

  /**
   * The lowest id a new fragment may take: above every id a carried bitmap names, since lance
   * would take the new fragment's rows for indexed ones (and a search would never find them).
   */
  int firstNewFragmentId() {
    int max = -1;
    for (Index i : candidates.values()) {
      for (int f : i.fragments().orElse(List.of())) {
        max = Math.max(max, f);
      }
    }
    return max + 1;
  }

  /**
   * Chooses the segments the Overwrite to {@code fragments} carries, and returns the schema
   * metadata value that records them ({@code null}: none). A segment whose bitmap names no
   * fragment left is dropped, except the newest one of an index that has no other: it keeps
   * the index (its trained model, its parameters) for the update after the commit.
   *
   * @param replacesAll the commit replaces every row (a full rebuild, a UDTF refresh)
   * @param rowsAdded the rows of the commit's new fragments
   */
  String select(List<FragmentMetadata> fragments, boolean replacesAll, long rowsAdded) {
    retrain.clear();
    Set<Integer> live = new HashSet<>();
    fragments.forEach(f -> live.add(f.getId()));
    List<Index> out = new ArrayList<>();
    for (Map.Entry<String, List<Index>> e : byName(candidates.values()).entrySet()) {
      List<Index> segments = e.getValue();
      List<Index> keep = segments.stream().filter(i -> i.fragments().isEmpty()
          || i.fragments().get().stream().anyMatch(live::contains)).toList();
      if (keep.isEmpty()) {
        keep = List.of(segments.stream().max(Comparator.comparingLong(Index::datasetVersion))
            .orElseThrow());
      }
      out.addAll(keep);
      // A compaction moves rows without changing them, so a delta segment on the trained
      // centroids serves them as well as before. A commit replacing every row (a UDTF view
      // does on each refresh) retrains only when most of the rows are new to the model: more
      // than twice the rows it was trained over; the segment bound retrains in any case.
      if (replacesAll && rowsAdded > 2 * modelRows.getOrDefault(e.getKey(), 0L)) {
        retrain.add(e.getKey());
      }
    }
    carried = List.copyOf(out);
    return carried.isEmpty() ? null : new IndexRecord(readVersion + 1, carried).json();
  }

  /**
   * For a view with no commit to make (a refresh with nothing to do, a maintenance that does
   * not compact): registers the segments an interrupted commit still owes, before a cleanup
   * can remove their files. Returns what happened to each index ({@code vix: updated, ...}),
   * or {@code null} when nothing was owed. Never throws.
   */
  static String registerOwed(LanceLocation view) {
    return PrivateAllocator.run(a -> {
      try {
        Carried c = carryOwed(view, a);
        return c == null || c.indexes().isEmpty() ? null : String.join("; ", c.indexes()
            .stream().map(IndexOutcome::toString).toList());
      } catch (Exception e) { // lance-core's IOException arrives undeclared
        LOG.warn("View table '{}': registering the indexes an interrupted commit owes failed "
            + "({}); the view's next commit does it", LanceLocation.withoutUserInfo(
            view.uri()), LanceLocation.withoutUserInfo(String.valueOf(e.getMessage())));
        return null;
      }
    });
  }

  /** {@link #registerOwed} on {@code allocator}; {@code null} when nothing is owed. */
  private static Carried carryOwed(LanceLocation table, BufferAllocator allocator) {
    try (Dataset ds = table.open(allocator, null)) {
      IndexCarry c = new IndexCarry(table.uri(), ds.version());
      c.gather(ds);
      if (c.owed.isEmpty() && c.gone.isEmpty()) {
        return null;
      }
      c.carried = c.candidates.values().stream().filter(i -> c.owed.contains(i.uuid()))
          .toList();
      return c.carry(table, allocator, ds.version());
    }
  }

  /**
   * After the Overwrite landed as {@code version}: registers the carried segments again
   * ({@link #register}) and brings each index up to date ({@link #update}); returns what
   * happened to each, and the view's version after. Never throws: the Overwrite stands whatever
   * happens here, and what is left undone is reported (and done by the next commit, or found by
   * flat search meanwhile).
   */
  Carried carry(LanceLocation table, BufferAllocator allocator, long version) {
    return update(table, allocator, register(table, allocator, version));
  }

  /** The first step of {@link #carry}: the CreateIndex of the carried segments. */
  IndexRegistration.Registered register(LanceLocation table, BufferAllocator allocator,
      long version) {
    return new IndexRegistration(this).register(table, allocator, version);
  }

  /** The second step of {@link #carry}: each index {@code r} registered brought up to date. */
  Carried update(LanceLocation table, BufferAllocator allocator, IndexRegistration.Registered r) {
    return new IndexUpdate(this).update(table, allocator, r);
  }

  /** What {@link #carry} did: each index's outcome, and the view's version after it. */
  record Carried(List<IndexOutcome> indexes, long latestVersion) {}

  String location() {
    return location;
  }

  /** The read version's user index segments plus those still owed (after {@link #gather}). */
  Collection<Index> candidates() {
    return candidates.values();
  }

  /** What the Overwrite carries (after {@link #select}). */
  List<Index> carried() {
    return carried;
  }

  /** Owed segments whose files are gone, by index name. */
  Map<String, List<Index>> gone() {
    return gone;
  }

  /** Whether one of {@code segs} is owed by an earlier Overwrite. */
  boolean owes(List<Index> segs) {
    return segs.stream().anyMatch(i -> owed.contains(i.uuid()));
  }

  /** Whether vector index {@code name} is built again from its recipe (see {@link #select}). */
  boolean retrains(String name) {
    return retrain.contains(name);
  }

  /** The recipe of a vector index, when it still describes it (the same column). */
  IndexRecipe recipeOf(String name, Index index, Dataset ds) {
    IndexRecipe r = IndexRecipe.of(config, name);
    if (r == null || index.fields().size() != 1) {
      return null;
    }
    int id = index.fields().get(0);
    boolean same = ds.getLanceSchema().fields().stream()
        .anyMatch(f -> f.getId() == id && f.getName().equals(r.column()));
    return same ? r : null;
  }

  /**
   * Whether {@code i} is a vector index: by its type, or (an index built through lance-spark
   * has none in lance-core 4.0.0's answer) by its column, a fixed-size list.
   */
  boolean isVector(Index i) {
    if (i.indexType() != null) {
      return i.indexType() == IndexType.VECTOR || i.indexType().name().startsWith("IVF");
    }
    return i.fields().size() == 1 && vectorFields.contains(i.fields().get(0));
  }

  /** Logs {@code o}, a warning when it is bad news; returns it. */
  IndexOutcome log(IndexOutcome o) {
    if (o.bad()) {
      LOG.warn("View table '{}': index {}", LanceLocation.withoutUserInfo(location), o);
    } else {
      LOG.info("View table '{}': index {}", LanceLocation.withoutUserInfo(location), o);
    }
    return o;
  }

  /** The view's latest version, or {@code version} when it cannot be read. */
  static long latestVersion(LanceLocation table, BufferAllocator allocator, long version) {
    try (Dataset ds = table.open(allocator, null)) {
      return ds.version();
    } catch (Exception ex) { // lance-core's IOException arrives undeclared
      return version; // the version the Overwrite created is still a true answer
    }
  }

  /** Indexes a user made (lance-core's own bookkeeping indexes are not carried). */
  private static boolean isUser(Index i) {
    return i.indexType() != IndexType.FRAGMENT_REUSE && i.indexType() != IndexType.MEM_WAL;
  }

  static Map<String, List<Index>> byName(Collection<Index> all) {
    Map<String, List<Index>> m = new TreeMap<>();
    all.forEach(i -> m.computeIfAbsent(i.name(), k -> new ArrayList<>()).add(i));
    return m;
  }
}
