package io.lancerest.spark.mv.commit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lancerest.client.LanceJson;
import io.lancerest.spark.connector.LanceLocation;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.Transaction;
import org.lance.index.Index;
import org.lance.index.IndexType;
import org.lance.index.OptimizeOptions;
import org.lance.operation.CreateIndex;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The indexes a {@link ViewCommit} carries over its Overwrite (which drops every index of the
 * table): gathered from the read version plus those an earlier commit still owes, recorded in
 * the Overwrite's own schema metadata ({@link #KEY}), registered again unchanged by a CreateIndex
 * commit once the Overwrite landed, then brought up to date.
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
    listed.forEach(name -> modelRows.put(name, Coverage.of(ds, name).indexedRows));
    Map<String, String> meta = ds.getSchema().getCustomMetadata();
    Recorded rec = Recorded.parse(meta == null ? null : meta.get(KEY));
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
   * registered and checked through lance-core afterwards ({@link #owedAndGone}).
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
    return carried.isEmpty() ? null : new Recorded(readVersion + 1, carried).json();
  }

  /**
   * For a view with no commit to make (a refresh with nothing to do, a maintenance that does
   * not compact): registers the segments an interrupted commit still owes, before a cleanup
   * can remove their files; {@code null} when nothing is owed.
   */
  static Carried carryOwed(LanceLocation table, BufferAllocator allocator) {
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
   * ({@link #register}) and brings each index up to date ({@link #update(LanceLocation,
   * BufferAllocator, Registered)}); returns what happened to each, and the view's version after.
   * Never throws: the Overwrite stands whatever happens here, and what is left undone is
   * reported (and done by the next commit, or found by flat search meanwhile).
   */
  Carried carry(LanceLocation table, BufferAllocator allocator, long version) {
    return update(table, allocator, register(table, allocator, version));
  }

  /**
   * What {@link #register} did: the segments this commit registered, by index name (the ones it
   * brings up to date), and the outcomes of the indexes it leaves as they are.
   */
  record Registered(long version, Map<String, List<Index>> ours, List<IndexOutcome> done) {}

  /** The first step of {@link #carry}: the CreateIndex of the carried segments. */
  Registered register(LanceLocation table, BufferAllocator allocator, long version) {
    List<IndexOutcome> done = new ArrayList<>();
    Map<String, List<Index>> ours = new TreeMap<>();
    if (carried.isEmpty()) {
      return new Registered(version, ours, done);
    }
    Map<String, List<Index>> names = byName(carried);
    Set<String> byOthers = new HashSet<>();
    Map<String, String> failed = register(table, allocator, version, names, byOthers);
    for (Map.Entry<String, List<Index>> e : names.entrySet()) {
      String failure = failed.get(e.getKey());
      boolean vector = isVector(e.getValue().get(0));
      if (failure != null) {
        done.add(log(new IndexOutcome(e.getKey(), vector, IndexOutcome.Action.PENDING, 0, 0, 0,
            e.getValue().size(), "registering it again after the commit failed (" + failure
            + "); the view's next commit tries again")));
      } else if (byOthers.contains(e.getKey())) {
        // That commit (another refresh's, or a maintenance's) brings the index up to date:
        // updating it here too would add a second delta segment for the same fragments.
        done.add(log(skipped(table, allocator, e.getKey(), vector, "another commit of the view "
            + "registered it")));
      } else {
        ours.put(e.getKey(), e.getValue());
      }
    }
    return new Registered(version, ours, done);
  }

  /**
   * The second step of {@link #carry}: brings up to date each index {@code r} registered, and
   * builds again those whose files are gone. Before each of these commits, the index's segments
   * at the latest version are checked to be those this commit registered (none, for one whose
   * files are gone): a user's DROP INDEX or CREATE INDEX, or another commit's update, landed
   * meanwhile is left as it is, since lance-core rebases one index commit over another and the
   * update would bring back a dropped index or leave two segments covering the same fragments.
   */
  Carried update(LanceLocation table, BufferAllocator allocator, Registered r) {
    List<IndexOutcome> out = new ArrayList<>(r.done());
    gone.forEach((name, segs) -> out.add(log(rebuildLost(table, allocator, name, segs))));
    for (Map.Entry<String, List<Index>> e : r.ours().entrySet()) {
      try (Dataset ds = table.open(allocator, null)) {
        out.add(log(update(table, allocator, ds, e.getKey(), e.getValue())));
      } catch (Exception ex) { // lance-core's IOException arrives undeclared
        out.add(log(new IndexOutcome(e.getKey(), isVector(e.getValue().get(0)),
            IndexOutcome.Action.NOT_UPDATED, 0, 0, 0, e.getValue().size(), "the view could "
            + "not be read: " + message(ex))));
      }
    }
    return new Carried(out, latest(table, allocator, r.version()));
  }

  /**
   * Why index {@code name}'s segments at {@code latest} are not {@code expected} (what this
   * commit registered, or left after removing its own), or {@code null} when they are.
   */
  private static String changedByOthers(Dataset latest, String name, List<Index> expected) {
    Set<UUID> now = new HashSet<>();
    latest.getIndexes().forEach(i -> {
      if (i.name().equals(name)) {
        now.add(i.uuid());
      }
    });
    Set<UUID> want = new HashSet<>();
    expected.forEach(i -> want.add(i.uuid()));
    if (now.equals(want)) {
      return null;
    }
    return now.isEmpty() ? "another commit dropped it (a DROP INDEX)"
        : want.isEmpty() ? "another commit created an index of that name"
        : "another commit changed it (a CREATE INDEX replacing it, or another refresh updating "
            + "it)";
  }

  /** An index this commit leaves to the view's next refresh, since {@code why}. */
  private static IndexOutcome skipped(LanceLocation table, BufferAllocator allocator,
      String name, boolean vector, String why) {
    return outcome(table, allocator, name, vector, IndexOutcome.Action.SKIPPED, 0, why
        + " while this commit was carrying it; left as that commit made it, the view's next "
        + "refresh brings it up to date");
  }

  private static long latest(LanceLocation table, BufferAllocator allocator, long version) {
    try (Dataset ds = table.open(allocator, null)) {
      return ds.version();
    } catch (Exception ex) { // lance-core's IOException arrives undeclared
      return version; // the version the Overwrite created is still a true answer
    }
  }

  /** An owed index whose files are gone: built again from its recipe, else reported lost. */
  private IndexOutcome rebuildLost(LanceLocation table, BufferAllocator allocator, String name,
      List<Index> segs) {
    boolean vector = isVector(segs.get(0));
    String why = "its files are gone (removed by a cleanup before the view's next commit "
        + "registered it)";
    try (Dataset ds = table.open(allocator, null)) {
      IndexRecipe recipe = vector ? recipeOf(name, segs.get(0), ds) : null;
      if (recipe == null) {
        return new IndexOutcome(name, vector, IndexOutcome.Action.LOST, 0, 0, 0, 0, why
            + "; no recipe to build it again: create the index again");
      }
      String other = changedByOthers(ds, name, List.of());
      if (other != null) {
        return skipped(table, allocator, name, vector, other);
      }
      ds.createIndex(List.of(recipe.column()), recipe.type(), Optional.of(name),
          recipe.params(), true);
      long rows = Coverage.of(ds, name).liveRows();
      return outcome(table, allocator, name, true, IndexOutcome.Action.REBUILT, rows,
          why + "; built again from its recipe " + recipe);
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      return new IndexOutcome(name, vector, IndexOutcome.Action.LOST, 0, 0, 0, 0, why
          + "; building it again failed (" + message(e) + "): create the index again");
    }
  }

  /** What {@link #carry} did: each index's outcome, and the view's version after it. */
  record Carried(List<IndexOutcome> indexes, long latestVersion) {}

  /**
   * Registers the carried segments ({@code names}) on {@code version}: one CreateIndex for all,
   * or, if lance-core refuses it, one per index, so that one index it refuses does not keep the
   * others unlisted. Returns, by index name, why its segments are not registered; the segments
   * of an index refused on its own are taken out of the record, so no later commit owes them
   * again and fails the same way.
   */
  private Map<String, String> register(LanceLocation table, BufferAllocator allocator,
      long version, Map<String, List<Index>> names, Set<String> byOthers) {
    Attempt all = registerOnce(table, allocator, version, carried);
    if (all.failure() == null) {
      if (all.byOthers()) {
        byOthers.addAll(names.keySet());
      }
      return Map.of();
    }
    Map<String, String> failed = new TreeMap<>();
    Set<UUID> refused = new HashSet<>();
    long at = latest(table, allocator, version);
    for (Map.Entry<String, List<Index>> e : names.entrySet()) {
      Attempt one = registerOnce(table, allocator, at, e.getValue());
      if (one.failure() == null) {
        if (one.byOthers()) {
          byOthers.add(e.getKey());
        }
        at = latest(table, allocator, at);
      } else {
        failed.put(e.getKey(), one.failure());
        e.getValue().forEach(i -> refused.add(i.uuid()));
      }
    }
    if (!refused.isEmpty()) {
      settle(table, allocator, refused);
    }
    return failed;
  }

  /**
   * {@link #registerOnce}'s answer: {@code failure} is why the segments are not registered
   * ({@code null}: they are), {@code byOthers} whether another commit registered them.
   */
  private record Attempt(String failure, boolean byOthers) {
    static final Attempt OURS = new Attempt(null, false);
  }

  /**
   * Commits the CreateIndex of {@code segs} read at {@code version}: registered by it (also
   * when its answer was lost but its transaction landed), by another commit, or not.
   */
  private Attempt registerOnce(LanceLocation table, BufferAllocator allocator, long version,
      List<Index> segs) {
    String uuid = null;
    try (Dataset at = table.open(allocator, version);
        Transaction t = new Transaction.Builder().readVersion(version)
            .operation(CreateIndex.builder().withNewIndices(segs).build()).build()) {
      uuid = t.uuid();
      try (Dataset done = new CommitBuilder(at).execute(t)) {
        return Attempt.OURS;
      }
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      // Its answer may have been lost although it landed; or another commit (a concurrent
      // Overwrite or no-op refresh of the view, which owes the same segments) registered them.
      // Another commit may also have brought them up to date since (a merge gives a new
      // uuid), or the user created the index again: an index of each name listed means
      // nothing is left to register.
      try (Dataset latest = table.open(allocator, null)) {
        Set<String> listed = new HashSet<>();
        latest.getIndexes().forEach(i -> listed.add(i.name()));
        if (landed(latest, version, uuid)) {
          return Attempt.OURS;
        }
        if (segs.stream().allMatch(i -> listed.contains(i.name()))) {
          return new Attempt(null, true);
        }
      } catch (Exception unreadable) { // lance-core's IOException arrives undeclared
        e.addSuppressed(unreadable);
      }
      return new Attempt(message(e), false);
    }
  }

  /** Whether a version of {@code head} after {@code version} holds transaction {@code uuid}. */
  private static boolean landed(Dataset head, long version, String uuid) {
    if (uuid == null) {
      return false;
    }
    for (long v = version + 1; v <= head.version(); v++) {
      try (Dataset at = head.checkoutVersion(v)) {
        Optional<Transaction> txn = at.readTransaction();
        try {
          if (txn.map(x -> uuid.equals(x.uuid())).orElse(false)) {
            return true;
          }
        } finally {
          txn.ifPresent(Transaction::close);
        }
      }
    }
    return false;
  }

  /**
   * Takes {@code refused} out of the latest version's record of carried segments (a schema
   * metadata update, a commit of its own), so that no later commit owes them again.
   */
  private void settle(LanceLocation table, BufferAllocator allocator, Set<UUID> refused) {
    try (Dataset ds = table.open(allocator, null)) {
      Map<String, String> meta = ds.getSchema().getCustomMetadata();
      Recorded rec = Recorded.parse(meta == null ? null : meta.get(KEY));
      if (rec == null) {
        return;
      }
      List<Index> left = rec.indexes().stream().filter(i -> !refused.contains(i.uuid()))
          .toList();
      Map<String, String> update = new java.util.HashMap<>();
      update.put(KEY, new Recorded(rec.version(), left).json());
      try (Transaction t = new Transaction.Builder().readVersion(ds.version())
              .operation(org.lance.operation.UpdateConfig.builder().schemaMetadataUpdates(
                  org.lance.operation.UpdateMap.builder().updates(update).replace(false).build())
                  .build()).build();
          Dataset done = new CommitBuilder(ds).execute(t)) {
        // recorded without them
      }
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      LOG.warn("View table '{}': the record of carried indexes could not be updated ({}); the "
          + "view's next commit tries to register them again", LanceLocation.withoutUserInfo(
          location), message(e));
    }
  }

  /** Brings index {@code name} of {@code ds} (the latest version) up to date. */
  private IndexOutcome update(LanceLocation table, BufferAllocator allocator, Dataset ds,
      String name, List<Index> segs) {
    boolean vector = isVector(segs.get(0));
    String other = changedByOthers(ds, name, segs);
    if (other != null) {
      return skipped(table, allocator, name, vector, other);
    }
    IndexRecipe recipe = vector ? recipeOf(name, segs.get(0), ds) : null;
    String lostFiles = owedAndGone(ds, name, segs);
    Coverage before = Coverage.of(ds, name);
    String why = lostFiles != null ? "its files are gone (" + lostFiles + ")"
        : retrain.contains(name) ? "the commit replaced the view's rows, most of them new to "
            + "the index's model"
        : vector && before.segments >= MAX_VECTOR_SEGMENTS && before.unindexedRows > 0
            ? "it has " + before.segments + " segments, the most a view's vector index keeps"
            : null;
    try {
      if (lostFiles != null) {
        removeSegments(ds, segs);
        if (recipe == null) {
          return new IndexOutcome(name, vector, IndexOutcome.Action.LOST, 0, 0,
              before.liveRows(), 0, why + "; no recipe to build it again: create the index "
              + "again");
        }
      }
      if (why != null && recipe != null) {
        try (Dataset latest = table.open(allocator, null)) {
          // a rebuild replaces whatever the name lists: only what this commit left there
          other = changedByOthers(latest, name, lostFiles != null ? List.of() : segs);
          if (other != null) {
            return skipped(table, allocator, name, vector, other);
          }
          latest.createIndex(List.of(recipe.column()), recipe.type(), Optional.of(name),
              recipe.params(), true);
        }
        return outcome(table, allocator, name, vector, IndexOutcome.Action.REBUILT,
            before.liveRows(), why + "; built again from its recipe " + recipe);
      }
      if (before.unindexedRows == 0) {
        return outcome(table, allocator, name, vector, IndexOutcome.Action.CARRIED, 0, "");
      }
      OptimizeOptions.Builder o = OptimizeOptions.builder().indexNames(List.of(name));
      if (vector) {
        o.numIndicesToMerge(0); // a delta segment; see the class comment
      }
      ds.optimizeIndices(o.build());
      String note = vector && why != null ? why + "; no recipe (not built by this engine's "
          + "CREATE INDEX), so the new rows get a delta segment" : "";
      return outcome(table, allocator, name, vector, IndexOutcome.Action.UPDATED,
          before.unindexedRows, note);
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      return outcome(table, allocator, name, vector, IndexOutcome.Action.NOT_UPDATED, 0,
          message(e) + "; its new rows are found by a flat search until the next commit indexes them");
    }
  }

  /** The outcome with the index's coverage as the latest version has it. */
  private static IndexOutcome outcome(LanceLocation table, BufferAllocator allocator,
      String name, boolean vector, IndexOutcome.Action action, long added, String detail) {
    try (Dataset latest = table.open(allocator, null)) {
      Coverage c = Coverage.of(latest, name);
      return new IndexOutcome(name, vector, action, added, c.indexedRows, c.unindexedRows,
          c.segments, detail);
    }
  }

  /**
   * For an index with segments owed by an earlier Overwrite: whether their files are still
   * there (a cleanup may have removed them since, as no version referenced them); {@code null}
   * when they are, else lance-core's answer.
   */
  private String owedAndGone(Dataset ds, String name, List<Index> segs) {
    if (segs.stream().noneMatch(i -> owed.contains(i.uuid()))) {
      return null;
    }
    try {
      ds.getIndexStatistics(name);
      return null;
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      return message(e);
    }
  }

  private static void removeSegments(Dataset ds, List<Index> segs) {
    try (Transaction t = new Transaction.Builder().readVersion(ds.version())
            .operation(CreateIndex.builder().withNewIndices(List.of())
                .withRemovedIndices(segs).build()).build();
        Dataset done = new CommitBuilder(ds).execute(t)) {
      // the index is no longer listed
    }
  }

  /** The recipe of a vector index, when it still describes it (the same column). */
  private IndexRecipe recipeOf(String name, Index index, Dataset ds) {
    IndexRecipe r = IndexRecipe.of(config, name);
    if (r == null || index.fields().size() != 1) {
      return null;
    }
    int id = index.fields().get(0);
    boolean same = ds.getLanceSchema().fields().stream()
        .anyMatch(f -> f.getId() == id && f.getName().equals(r.column()));
    return same ? r : null;
  }

  private IndexOutcome log(IndexOutcome o) {
    if (o.bad()) {
      LOG.warn("View table '{}': index {}", LanceLocation.withoutUserInfo(location), o);
    } else {
      LOG.info("View table '{}': index {}", LanceLocation.withoutUserInfo(location), o);
    }
    return o;
  }

  private static String message(Exception e) {
    return LanceLocation.withoutUserInfo(String.valueOf(e.getMessage()))
        .replaceFirst(",\\s*\\S+\\.rs:\\d+:\\d+\\s*$", "");
  }

  /**
   * Whether {@code i} is a vector index: by its type, or (an index built through lance-spark
   * has none in lance-core 4.0.0's answer) by its column, a fixed-size list.
   */
  private boolean isVector(Index i) {
    if (i.indexType() != null) {
      return i.indexType() == IndexType.VECTOR || i.indexType().name().startsWith("IVF");
    }
    return i.fields().size() == 1 && vectorFields.contains(i.fields().get(0));
  }

  /** Indexes a user made (lance-core's own bookkeeping indexes are not carried). */
  private static boolean isUser(Index i) {
    return i.indexType() != IndexType.FRAGMENT_REUSE && i.indexType() != IndexType.MEM_WAL;
  }

  /** {@code btree}, {@code inverted}, ...: what a scalar index is, for EXPLAIN. */
  private static String label(Dataset ds, Index i) {
    if (i.indexType() != null) {
      return i.indexType().name().toLowerCase(java.util.Locale.ROOT);
    }
    try {
      return String.valueOf(ds.getIndexStatistics(i.name()).get("index_type"))
          .toLowerCase(java.util.Locale.ROOT);
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      return "scalar";
    }
  }

  private static Map<String, List<Index>> byName(java.util.Collection<Index> all) {
    Map<String, List<Index>> m = new TreeMap<>();
    all.forEach(i -> m.computeIfAbsent(i.name(), k -> new ArrayList<>()).add(i));
    return m;
  }

  /**
   * What a refresh will do to each index of {@code view}: one line per index, for EXPLAIN
   * REFRESH. {@code rewrites}: the refresh rebuilds the view.
   */
  static List<String> explain(Dataset view, boolean rewrites, boolean noOp) {
    IndexCarry c = new IndexCarry(view.uri(), view.version());
    c.gather(view);
    List<String> out = new ArrayList<>();
    byName(c.candidates.values()).forEach((name, segs) -> {
      boolean vector = c.isVector(segs.get(0));
      IndexRecipe recipe = vector ? c.recipeOf(name, segs.get(0), view) : null;
      boolean owes = segs.stream().anyMatch(i -> c.owed.contains(i.uuid()));
      String what = noOp ? (owes ? "registered again by this refresh" : "unchanged")
          : !vector ? "carried over; new rows merged into it"
          : segs.size() >= MAX_VECTOR_SEGMENTS && recipe != null
              ? "carried over, then built again from its recipe " + recipe
          : rewrites ? (recipe != null ? "carried over; the new rows get a delta segment, or it "
                  + "is built again from its recipe " + recipe + " if they are more than twice "
                  + "the rows it covers" : "carried over; the new rows get a delta segment (no "
                  + "recipe to build it again)")
              : "carried over; new rows get a delta segment (" + (segs.size() + 1) + " of at "
                  + "most " + MAX_VECTOR_SEGMENTS + ")";
      out.add(name + " (" + (vector ? "vector" : label(view, segs.get(0))) + ", " + segs.size() + (segs.size() == 1 ? " segment" :
          " segments") + (owes && !noOp ? ", owed by an interrupted commit" : "") + "): "
          + what);
    });
    return out;
  }

  /** Live rows of the view an index's segments cover, and those they do not. */
  private record Coverage(long indexedRows, long unindexedRows, int segments) {
    static Coverage of(Dataset ds, String name) {
      Set<Integer> covered = new HashSet<>();
      int segments = 0;
      for (Index i : ds.getIndexes()) {
        if (i.name().equals(name)) {
          segments++;
          covered.addAll(i.fragments().orElse(List.of()));
        }
      }
      long in = 0;
      long out = 0;
      for (Fragment f : ds.getFragments()) {
        long rows = f.metadata().getNumRows();
        if (covered.contains(f.getId())) {
          in += rows;
        } else {
          out += rows;
        }
      }
      return new Coverage(in, out, segments);
    }

    long liveRows() {
      return indexedRows + unindexedRows;
    }
  }

  /** The {@link #KEY} record: the segments Overwrite {@code version} carried. */
  record Recorded(long version, List<Index> indexes) {
    String json() {
      ObjectNode n = LanceJson.mapper().createObjectNode();
      n.put("version", version);
      ArrayNode a = n.putArray("indexes");
      for (Index i : indexes) {
        ObjectNode o = a.addObject();
        o.put("name", i.name());
        o.put("uuid", i.uuid().toString());
        ArrayNode fields = o.putArray("fields");
        i.fields().forEach(fields::add);
        o.put("dataset_version", i.datasetVersion());
        i.fragments().ifPresent(fs -> {
          ArrayNode f = o.putArray("fragments");
          fs.forEach(f::add);
        });
        i.indexDetails().ifPresent(d -> o.put("details", Base64.getEncoder().encodeToString(d)));
        o.put("index_version", i.indexVersion());
        if (i.indexType() != null) {
          o.put("type", i.indexType().name());
        }
        i.createdAt().ifPresent(t -> o.put("created_at_ms", t.toEpochMilli()));
        i.baseId().ifPresent(b -> o.put("base_id", b));
      }
      return n.toString();
    }

    /** The record, or {@code null} when absent or unreadable (then nothing is owed). */
    static Recorded parse(String json) {
      if (json == null) {
        return null;
      }
      try {
        JsonNode n = LanceJson.mapper().readTree(json);
        List<Index> out = new ArrayList<>();
        for (JsonNode o : n.path("indexes")) {
          Index.Builder b = Index.builder()
              .name(o.path("name").asText())
              .uuid(UUID.fromString(o.path("uuid").asText()))
              .fields(ints(o.path("fields")))
              .datasetVersion(o.path("dataset_version").asLong())
              .indexVersion(o.path("index_version").asInt());
          if (o.has("type")) {
            b.indexType(IndexType.valueOf(o.path("type").asText()));
          }
          if (o.has("fragments")) {
            b.fragments(ints(o.path("fragments")));
          }
          if (o.has("details")) {
            b.indexDetails(Base64.getDecoder().decode(o.path("details").asText()));
          }
          if (o.has("created_at_ms")) {
            b.createdAt(java.time.Instant.ofEpochMilli(o.path("created_at_ms").asLong()));
          }
          if (o.has("base_id")) {
            b.baseId(o.path("base_id").asInt());
          }
          out.add(b.build());
        }
        return new Recorded(n.path("version").asLong(), out);
      } catch (Exception e) {
        LOG.warn("Unreadable record of carried indexes ({}): ignored", e.getMessage());
        return null;
      }
    }

    private static List<Integer> ints(JsonNode a) {
      List<Integer> out = new ArrayList<>();
      a.forEach(x -> out.add(x.asInt()));
      return out;
    }
  }
}
