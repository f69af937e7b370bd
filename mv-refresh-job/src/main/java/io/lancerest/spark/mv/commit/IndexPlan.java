package io.lancerest.spark.mv.commit;

import java.util.ArrayList;
import java.util.List;
import org.lance.Dataset;
import org.lance.index.Index;

/** The EXPLAIN REFRESH lines: what a refresh's commit will do to each index of a view. */
final class IndexPlan {
  private IndexPlan() {}

  /**
   * What a refresh will do to each index of {@code view}: one line per index. {@code rewrites}:
   * the refresh rebuilds the view; {@code noOp}: there is no commit.
   */
  static List<String> explain(Dataset view, boolean rewrites, boolean noOp) {
    IndexCarry c = new IndexCarry(view.uri(), view.version());
    c.gather(view);
    List<String> out = new ArrayList<>();
    IndexCarry.byName(c.candidates()).forEach((name, segs) -> {
      boolean vector = c.isVector(segs.get(0));
      IndexRecipe recipe = vector ? c.recipeOf(name, segs.get(0), view) : null;
      boolean owes = c.owes(segs);
      int max = IndexCarry.MAX_VECTOR_SEGMENTS;
      String what = noOp ? (owes ? "registered again by this refresh" : "unchanged")
          : !vector ? "carried over; new rows merged into it"
          : segs.size() >= max && recipe != null
              ? "carried over, then built again from its recipe " + recipe
          : rewrites ? (recipe != null ? "carried over; the new rows get a delta segment, or it "
                  + "is built again from its recipe " + recipe + " if they are more than twice "
                  + "the rows it covers" : "carried over; the new rows get a delta segment (no "
                  + "recipe to build it again)")
              : "carried over; new rows get a delta segment (" + (segs.size() + 1) + " of at "
                  + "most " + max + ")";
      out.add(name + " (" + (vector ? "vector" : label(view, segs.get(0))) + ", " + segs.size()
          + (segs.size() == 1 ? " segment" : " segments")
          + (owes && !noOp ? ", owed by an interrupted commit" : "") + "): " + what);
    });
    return out;
  }

  /** {@code btree}, {@code inverted}, ...: what a scalar index is. */
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
}
