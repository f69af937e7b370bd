package io.lancerest.spark.mv;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.fragments.LanceReads;
import io.lancerest.testing.LanceStates;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guarded read ({@link LanceReads#load}, the connector's SafeScanBuilder) gives exactly the
 * rows and columns of lance-spark's own read, on small datasets (where lance-core's quadratic
 * scans are still quick) in every fragment state: with {@code _rowid}, {@code _rowaddr}, {@code
 * _fragid}, the version columns and a blob column's virtual columns in any order, filtered or
 * not, and under vector search.
 */
class SafeReadsTest {
  static final int ROWS = 3000;
  @TempDir static Path dir;
  static SparkSession spark;
  /** state → dataset with id, k, v, name, vec, data. */
  static final Map<String, String> uris = new HashMap<>();

  @BeforeAll
  static void datasets() {
    spark = SparkFixture.spark();
    for (String state : List.of("plain", "deletions", "rewritten", "mixed")) {
      String uri = dir.resolve(state + ".lance").toString();
      LanceStates.writeWide(uri, 0, ROWS, true, true, true, true);
      if (!state.equals("plain")) {
        LanceStates.delete(uri, "id % 100 = 7");
      }
      if (state.equals("rewritten") || state.equals("mixed")) {
        LanceStates.compactDroppingDeletions(uri);
      }
      if (state.equals("mixed")) { // + a plain fragment and one with deletions
        LanceStates.writeWide(uri, ROWS, ROWS + 500, true, false, true, true);
        LanceStates.writeWide(uri, ROWS + 500, ROWS + 1000, true, false, true, true);
        LanceStates.delete(uri, "id >= " + (ROWS + 500) + " AND id % 10 = 3");
      }
      uris.put(state, uri);
    }
  }

  private static List<String> rows(Dataset<Row> df, String columns, String filter) {
    if (!filter.isEmpty()) {
      df = df.filter(filter);
    }
    List<String> out = new ArrayList<>();
    for (Row r : df.selectExpr(columns.split(";")).collectAsList()) {
      out.add(r.toString());
    }
    Collections.sort(out);
    return out;
  }

  private static void same(String state, String columns, String filter,
      Map<String, String> options) {
    String uri = uris.get(state);
    List<String> lance = rows(LanceReads.reader(spark, options, null).load(uri), columns, filter);
    List<String> guarded = rows(LanceReads.load(spark, uri, options, null), columns, filter);
    assertTrue(!lance.isEmpty(), state + " " + columns + " " + filter);
    if (!lance.equals(guarded)) {
      int i = 0;
      while (i < Math.min(lance.size(), guarded.size()) && lance.get(i).equals(guarded.get(i))) {
        i++;
      }
      throw new AssertionError(state + ": SELECT " + columns + " WHERE " + filter + ": "
          + lance.size() + " rows unguarded, " + guarded.size() + " guarded; first difference: "
          + (i < lance.size() ? lance.get(i) : "-") + " / "
          + (i < guarded.size() ? guarded.get(i) : "-"));
    }
  }

  @Test
  void everyColumnOrderAndFilterGivesLanceSparksRows() {
    List<String[]> queries = List.of(
        new String[] {"id;name", "id > 10"},
        new String[] {"id;_rowid", ""},
        new String[] {"_rowid;id;_rowaddr", "k = 8"},
        new String[] {"name;_row_last_updated_at_version;_rowid;_row_created_at_version;id",
            "id % 3 = 0"},
        new String[] {"_fragid;id;_rowid;name", "id < 2000"},
        new String[] {"id;data__blob_pos;data__blob_size;hex(data)", "id > 10"},
        // lance-spark computes a blob's virtual columns from the blob column: both are read
        new String[] {"id;_rowid;data__blob_pos;data__blob_size;hex(data)", ""},
        new String[] {"id;name;_rowid;data__blob_pos;data__blob_size;hex(data)", "k > 500"},
        new String[] {"count(*)", "id > 100"});
    for (String state : uris.keySet()) {
      for (String[] q : queries) {
        try {
          same(state, q[0], q[1], Map.of());
        } catch (Exception e) { // SparkException is checked to javac, not to Scala
          throw new AssertionError(state + ": SELECT " + q[0] + " WHERE " + q[1] + ": " + e, e);
        }
      }
    }
  }

  private static Map<String, String> nearest(int k) {
    org.lance.ipc.Query q = new org.lance.ipc.Query.Builder().setColumn("vec")
        .setKey(new float[] {0.5f, 0.5f, 0.5f, 0.5f}).setK(k).build();
    return Map.of("nearest", org.lance.spark.utils.QueryUtils.queryToString(q));
  }

  @Test
  void vectorSearchKeepsItsPrefilterAndRefusesRewrittenFragments() {
    for (String state : List.of("plain", "deletions")) {
      same(state, "id;k;name", "k < 100", nearest(5));
      same(state, "id;name;_rowid", "", nearest(50));
    }
    Exception e = assertThrows(Exception.class, () -> rows(LanceReads.load(spark,
        uris.get("rewritten"), nearest(5), null), "id;k", "k < 100"));
    String message = String.valueOf(e.getMessage());
    for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
      message += " / " + c.getMessage();
    }
    assertTrue(message.contains("Vector search (nearest) on table")
        && message.contains("were rewritten by a compaction"), message);
  }
}
