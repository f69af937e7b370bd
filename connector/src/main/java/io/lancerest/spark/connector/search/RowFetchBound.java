package io.lancerest.spark.connector.search;

import io.lancerest.spark.connector.read.FragmentHazard;
import java.io.Serializable;
import java.util.TreeSet;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;

/**
 * How many rows a search may return with table columns from a table with deleted rows.
 *
 * <p>lance-core 4.0.0 fetches the table columns of the rows a search returns by row id, and on a
 * fragment with deletions and stable row ids it finds each id by walking the fragment's row ids:
 * time in proportion to the rows returned times the fragment's rows. Measured on one
 * 400,000-row fragment with one row in 1,000 deleted, no index, reading {@code id}: k = 100
 * about 1 s, k = 2,000 12 s, k = 8,000 32 s (under 50 ms without deletions). The same search
 * returning only the score column fetches nothing and takes 40 ms. So a search that reads table
 * columns is refused when the rows it returns (k, or the table's rows when fewer) times the rows
 * of the largest fragment with deletions exceed {@link #MAX_WORK} (about 15 s).
 *
 * @param table the table's name, for messages
 * @param fragments the fragments with deleted rows
 * @param largestRows the physical rows of the largest of them (0 when there is none)
 * @param liveRows the table's rows: a search returns at most these, whatever its k
 */
public record RowFetchBound(String table, TreeSet<Integer> fragments, long largestRows,
    long liveRows) implements Serializable {
  /** The largest k times fragment rows a search may cost. */
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

  /** The largest k a search that reads table columns may ask for (any k above the table's rows is
   * allowed when its rows are within the bound). */
  public long maxK() {
    return largestRows == 0 ? Long.MAX_VALUE : MAX_WORK / largestRows;
  }

  /**
   * Refuses {@code plan} when the rows it fetches by row id exceed {@link #maxK()}: its k rows
   * when it reads table columns, and, with a {@code refine_factor}, the k &times; refine_factor
   * candidates whose vectors lance-core fetches to re-rank them, whatever columns it reads.
   */
  public void check(String function, SearchPlan plan, boolean readsTableColumns) {
    int k = plan.vector() != null ? plan.vector().k() : plan.text().k();
    Integer refine = plan.vector() != null ? plan.vector().refineFactor() : null;
    long fetched = Math.min((long) k * (refine == null ? 1 : refine), liveRows);
    if ((!readsTableColumns && refine == null) || fetched <= maxK()) {
      return;
    }
    String what = refine == null ? "k = " + k : "k = " + k + " with refine_factor " + refine
        + " (k times refine_factor = " + (long) k * refine + " candidates re-ranked)";
    String ask = refine == null ? "Ask for k of at most " + maxK() + ", or select only "
        + plan.scoreColumn() : "Ask for k times refine_factor of at most " + maxK()
        + " (or leave refine_factor out and select only " + plan.scoreColumn() + ")";
    throw new SearchException(function + " on " + table + ": " + what + " is too large for "
        + "this table: fragments " + fragments + " have deleted rows, and lance-core 4.0.0 "
        + "fetches each " + (refine == null ? "returned row" : "row it returns or re-ranks")
        + " of such a fragment in time proportional to its rows (the largest has " + largestRows
        + "; " + (refine == null ? "k" : "those rows") + " times that may be at most "
        + MAX_WORK + ", about 15 s; docs/search.md). " + ask + ", or rewrite the table without "
        + "deleted rows (a materialized view: REFRESH MATERIALIZED VIEW ... WITH (force = "
        + "true); a table: CREATE TABLE ... AS SELECT).");
  }
}
