package io.lancerest.spark.connector.search;

import io.lancerest.spark.connector.read.FragmentHazard;
import java.io.Serializable;
import java.util.TreeSet;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;

/**
 * How many rows a search may fetch by row id from a table with deleted rows.
 *
 * <p>lance-core 4.0.0 fetches the table columns of the rows a search returns by row id, and on a
 * fragment with deletions and stable row ids it finds each id by walking the fragment's row ids:
 * time in proportion to the rows fetched times the fragment's rows. Measured on one
 * 400,000-row fragment with one row in 1,000 deleted, no index, reading {@code id}: k = 100
 * about 1 s, k = 2,000 12 s, k = 8,000 32 s (under 50 ms without deletions). The same search
 * returning only the score column fetches nothing and takes 40 ms. A search through a vector
 * index with a {@code refine_factor} also fetches the vectors of its k &times; refine_factor
 * candidates, whatever columns it returns (an exact search without an index ignores the
 * factor). So a search is refused when the rows it fetches (each count at most the table's
 * rows) times the rows of the largest fragment with deletions exceed {@link #MAX_WORK} (about
 * 15 s).
 *
 * @param table the table's name, for messages
 * @param fragments the fragments with deleted rows
 * @param largestRows the physical rows of the largest of them (0 when there is none)
 * @param liveRows the table's rows: a search returns at most these, whatever its k
 */
public record RowFetchBound(String table, TreeSet<Integer> fragments, long largestRows,
    long liveRows) implements Serializable {
  /** The largest rows fetched times fragment rows a search may cost. */
  public static final long MAX_WORK = 1_000_000_000L;

  /** The fragments with deletions of {@code ds}'s version. */
  public static RowFetchBound of(Dataset ds, String table) {
    TreeSet<Integer> deleted = new TreeSet<>();
    long largest = 0;
    long live = 0;
    for (Fragment f : ds.getFragments()) {
      FragmentMetadata m = f.metadata();
      live += m.getNumRows();
      // without stable row ids a row id is the row's address: no walk, no bound
      if (FragmentHazard.of(m) == FragmentHazard.DELETIONS) {
        deleted.add(m.getId());
        largest = Math.max(largest, m.getPhysicalRows());
      }
    }
    return new RowFetchBound(table, deleted, largest, live);
  }

  /**
   * The most rows a search may fetch by row id: its k when it reads table columns, plus k
   * &times; refine_factor when it re-ranks through an index (a count above the table's rows
   * counts as the table's rows).
   */
  public long maxK() {
    return largestRows == 0 ? Long.MAX_VALUE : MAX_WORK / largestRows;
  }

  /**
   * Refuses {@code plan} when the rows it fetches by row id exceed {@link #maxK()}: its k rows
   * when it reads table columns, plus, through an index with a {@code refine_factor}, the k
   * &times; refine_factor candidates whose vectors lance-core fetches to re-rank them.
   */
  public void check(String function, SearchPlan plan, boolean readsTableColumns) {
    int k = plan.vector() != null ? plan.vector().k() : plan.text().k();
    // the planner drops the factor of a search without an index: it is exact and re-ranks nothing
    Integer refine = plan.vector() != null ? plan.vector().refineFactor() : null;
    long returned = readsTableColumns ? Math.min(k, liveRows) : 0;
    long reranked = refine == null ? 0 : Math.min((long) k * refine, liveRows);
    if (returned + reranked <= maxK()) {
      return;
    }
    String what = refine == null ? "k = " + k : "k = " + k + " with refine_factor " + refine
        + " (" + (returned + reranked) + " rows fetched: " + reranked + " candidates re-ranked"
        + (readsTableColumns ? " and " + returned + " returned" : "") + ")";
    String ask = refine == null
        ? "Ask for k of at most " + maxK() + ", or select only " + plan.scoreColumn()
        : "Ask for fewer rows: k times refine_factor" + (readsTableColumns ? " plus k" : "")
            + " of at most " + maxK() + (readsTableColumns && k <= maxK()
                ? ", or no refine_factor (k = " + k + " is within the bound)" : "")
            + (!readsTableColumns || k > maxK() ? ", or no refine_factor and select only "
                + plan.scoreColumn() : "");
    throw new SearchException(function + " on " + table + ": " + what + " is too large for "
        + "this table: fragments " + fragments + " have deleted rows, and lance-core 4.0.0 "
        + "fetches each " + (refine == null ? "returned row" : "row it returns or re-ranks")
        + " of such a fragment in time proportional to its rows (the largest has " + largestRows
        + "; " + (refine == null ? "k" : "the rows fetched") + " times that may be at most "
        + MAX_WORK + ", about 15 s; docs/search.md). " + ask + ", or rewrite the table without "
        + "deleted rows (a materialized view: REFRESH MATERIALIZED VIEW ... WITH (force = "
        + "true); a table: CREATE TABLE ... AS SELECT).");
  }
}
