package io.lancerest.spark.mv.commit;

import static io.lancerest.spark.mv.commit.LanceErrors.message;

import io.lancerest.spark.connector.LanceLocation;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Transaction;
import org.lance.index.Index;
import org.lance.index.OptimizeOptions;
import org.lance.operation.CreateIndex;

/**
 * The second step after a carrying Overwrite landed: brings each index it registered up to date
 * (scalar and full-text: new rows merged in; vector: a delta segment, or a rebuild from its
 * {@link IndexRecipe}; see {@link IndexCarry} for when), and builds again those whose files are
 * gone.
 */
final class IndexUpdate {
  private final IndexCarry carry;

  IndexUpdate(IndexCarry carry) {
    this.carry = carry;
  }

  /**
   * Brings up to date each index {@code r} registered, and builds again those whose files are
   * gone. Before each of these commits, the index's segments at the latest version are checked
   * to be those this commit registered (none, for one whose files are gone): a user's DROP INDEX
   * or CREATE INDEX, or another commit's update, landed meanwhile is left as it is, since
   * lance-core rebases one index commit over another and the update would bring back a dropped
   * index or leave two segments covering the same fragments.
   */
  IndexCarry.Carried update(LanceLocation table, BufferAllocator allocator,
      IndexRegistration.Registered r) {
    List<IndexOutcome> out = new ArrayList<>(r.done());
    carry.gone().forEach((name, segs) -> out.add(carry.log(rebuildLost(table, allocator, name,
        segs))));
    for (Map.Entry<String, List<Index>> e : r.ours().entrySet()) {
      try (Dataset ds = table.open(allocator, null)) {
        out.add(carry.log(update(table, allocator, ds, e.getKey(), e.getValue())));
      } catch (Exception ex) { // lance-core's IOException arrives undeclared
        out.add(carry.log(new IndexOutcome(e.getKey(), carry.isVector(e.getValue().get(0)),
            IndexOutcome.Action.NOT_UPDATED, 0, 0, 0, e.getValue().size(), "the view could "
            + "not be read: " + message(ex))));
      }
    }
    // nothing registered, updated or rebuilt: no commit of ours after the Overwrite, and the
    // view is not opened again (a view without indexes costs nothing here)
    long latest = r.ours().isEmpty() && carry.gone().isEmpty() && out.isEmpty() ? r.version()
        : IndexCarry.latestVersion(table, allocator, r.version());
    return new IndexCarry.Carried(out, latest);
  }

  /** Brings index {@code name} of {@code ds} (the latest version) up to date. */
  private IndexOutcome update(LanceLocation table, BufferAllocator allocator, Dataset ds,
      String name, List<Index> segs) {
    boolean vector = carry.isVector(segs.get(0));
    String other = changedByOthers(ds, name, segs);
    if (other != null) {
      return skipped(table, allocator, name, vector, other);
    }
    IndexRecipe recipe = vector ? carry.recipeOf(name, segs.get(0), ds) : null;
    String lostFiles = owedAndGone(ds, name, segs);
    IndexCoverage before = IndexCoverage.of(ds, name);
    String why = lostFiles != null ? "its files are gone (" + lostFiles + ")"
        : carry.retrains(name) ? "the commit replaced the view's rows, most of them new to "
            + "the index's model"
        : vector && before.segments() >= IndexCarry.MAX_VECTOR_SEGMENTS
            && before.unindexedRows() > 0
            ? "it has " + before.segments() + " segments, the most a view's vector index keeps"
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
      if (before.unindexedRows() == 0) {
        return outcome(table, allocator, name, vector, IndexOutcome.Action.CARRIED, 0, "");
      }
      OptimizeOptions.Builder o = OptimizeOptions.builder().indexNames(List.of(name));
      if (vector) {
        o.numIndicesToMerge(0); // a delta segment; see IndexCarry's class comment
      }
      ds.optimizeIndices(o.build());
      String note = vector && why != null ? why + "; no recipe (not built by this engine's "
          + "CREATE INDEX), so the new rows get a delta segment" : "";
      return outcome(table, allocator, name, vector, IndexOutcome.Action.UPDATED,
          before.unindexedRows(), note);
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      return outcome(table, allocator, name, vector, IndexOutcome.Action.NOT_UPDATED, 0,
          message(e) + "; its new rows are found by a flat search until the next commit indexes "
          + "them");
    }
  }

  /** An owed index whose files are gone: built again from its recipe, else reported lost. */
  private IndexOutcome rebuildLost(LanceLocation table, BufferAllocator allocator, String name,
      List<Index> segs) {
    boolean vector = carry.isVector(segs.get(0));
    String why = "its files are gone (removed by a cleanup before the view's next commit "
        + "registered it)";
    try (Dataset ds = table.open(allocator, null)) {
      IndexRecipe recipe = vector ? carry.recipeOf(name, segs.get(0), ds) : null;
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
      long rows = IndexCoverage.of(ds, name).liveRows();
      return outcome(table, allocator, name, true, IndexOutcome.Action.REBUILT, rows,
          why + "; built again from its recipe " + recipe);
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      return new IndexOutcome(name, vector, IndexOutcome.Action.LOST, 0, 0, 0, 0, why
          + "; building it again failed (" + message(e) + "): create the index again");
    }
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
  static IndexOutcome skipped(LanceLocation table, BufferAllocator allocator, String name,
      boolean vector, String why) {
    return outcome(table, allocator, name, vector, IndexOutcome.Action.SKIPPED, 0, why
        + " while this commit was carrying it; left as that commit made it, the view's next "
        + "refresh brings it up to date");
  }

  /** The outcome with the index's coverage as the latest version has it. */
  private static IndexOutcome outcome(LanceLocation table, BufferAllocator allocator,
      String name, boolean vector, IndexOutcome.Action action, long added, String detail) {
    try (Dataset latest = table.open(allocator, null)) {
      IndexCoverage c = IndexCoverage.of(latest, name);
      return new IndexOutcome(name, vector, action, added, c.indexedRows(), c.unindexedRows(),
          c.segments(), detail);
    }
  }

  /**
   * For an index with segments owed by an earlier Overwrite: whether their files are still
   * there (a cleanup may have removed them since, as no version referenced them); {@code null}
   * when they are, else lance-core's answer.
   */
  private String owedAndGone(Dataset ds, String name, List<Index> segs) {
    if (!carry.owes(segs)) {
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
}
