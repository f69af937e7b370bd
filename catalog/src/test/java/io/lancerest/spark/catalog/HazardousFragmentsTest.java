package io.lancerest.spark.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.connector.read.FragmentHazard;
import io.lancerest.spark.connector.read.TableFragments;
import io.lancerest.testing.LanceStates;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Reads, DELETE / UPDATE / MERGE through the catalog on tables in the fragment states lance-core
 * 4.0.0 scans in quadratic time ({@link FragmentHazard}): each finishes (every Spark job is under
 * the session's bounded wait, {@code JobWatchdog}) and gives exactly the rows Spark's own
 * semantics give.
 *
 * <p>The tables have one fragment of {@value #ROWS} rows with stable row ids, on which the
 * unguarded scans take minutes to hours (LanceCoreScanDefectTest), plus a small fragment
 * without hazard: rows {@code (id, k = id % 1000, v = id / 2, name = 'name' || id)} with the
 * rows {@code k = 7} of the big fragment deleted.
 */
@Tag("slow")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HazardousFragmentsTest {
  static final int ROWS = 200_000;
  static final int EXTRA = 1_000;
  private SharedSpark shared;
  private SparkSession spark;
  private String ns;
  /** table name → the rows' {@code id → _rowid}, read before any hazard could apply. */
  private final Map<String, Map<Long, Long>> rowIds = new HashMap<>();

  @BeforeAll
  void tables() {
    shared = SharedSpark.get();
    spark = shared.spark;
    ns = "lance." + SharedSpark.unique("hz");
    sql("CREATE NAMESPACE " + ns);
  }

  private List<Row> sql(String s) {
    return spark.sql(s).collectAsList();
  }

  /**
   * A table in state {@code hazard}: {@link FragmentHazard#DELETIONS} (a DELETE on the big
   * fragment) or {@link FragmentHazard#REWRITTEN_ROW_IDS} (then compacted, dropping the deleted
   * rows, by lance-core on the table's dataset, as other writers do).
   */
  private String table(String name, FragmentHazard hazard) {
    String t = ns + "." + name;
    sql("CREATE TABLE " + t + " TBLPROPERTIES ('enable_stable_row_ids' = 'true') AS SELECT "
        + "/*+ COALESCE(1) */ id, "
        + "CAST(id % 1000 AS INT) AS k, id / 2 AS v, concat('name', CAST(id AS STRING)) AS name "
        + "FROM range(" + ROWS + ")");
    sql("DELETE FROM " + t + " WHERE k = 7");
    Map<Long, Long> ids = new HashMap<>();
    for (Row r : sql("SELECT id, _rowid FROM " + t)) {
      ids.put(r.getLong(0), r.getLong(1));
    }
    if (hazard == FragmentHazard.REWRITTEN_ROW_IDS) {
      LanceStates.compactDroppingDeletions(location(t));
    }
    sql("INSERT INTO " + t + " SELECT id, CAST(id % 1000 AS INT), id / 2, concat('name', "
        + "CAST(id AS STRING)) FROM range(" + ROWS + ", " + (ROWS + EXTRA) + ")");
    for (Row r : sql("SELECT id, _rowid FROM " + t + " WHERE id >= " + ROWS)) {
      ids.put(r.getLong(0), r.getLong(1));
    }
    rowIds.put(t, ids);
    TableFragments f = fragments(t);
    assertTrue(f.any(hazard), t + " is in state " + hazard + ": " + f.hazards());
    return t;
  }

  private String location(String t) {
    return table(t).readOptions().getDatasetUri();
  }

  private TableFragments fragments(String t) {
    return TableFragments.read(table(t).readOptions());
  }

  private CatalogTable table(String t) {
    try {
      return (CatalogTable) cat().loadTable(ident(t));
    } catch (org.apache.spark.sql.catalyst.analysis.NoSuchTableException e) {
      throw new AssertionError(e);
    }
  }

  private LanceRestCatalog cat() {
    return (LanceRestCatalog) spark.sessionState().catalogManager().catalog("lance");
  }

  private static org.apache.spark.sql.connector.catalog.Identifier ident(String t) {
    String[] p = t.split("\\.");
    return org.apache.spark.sql.connector.catalog.Identifier.of(
        java.util.Arrays.copyOfRange(p, 1, p.length - 1), p[p.length - 1]);
  }

  /** Whether the first DELETE removed row {@code id} (the rows inserted after it stay). */
  private static boolean deleted(long id) {
    return id < ROWS && id % 1000 == 7;
  }

  private static long live(long from, long to, java.util.function.LongPredicate p) {
    long n = 0;
    for (long id = from; id < to; id++) {
      if (!deleted(id) && p.test(id)) {
        n++;
      }
    }
    return n;
  }

  @Test
  void filteredReadsOfLateColumnsGiveSparksRows() {
    for (FragmentHazard h : List.of(FragmentHazard.DELETIONS, FragmentHazard.REWRITTEN_ROW_IDS)) {
      String t = table("reads_" + h.name().toLowerCase(), h);
      long n = live(0, ROWS + EXTRA, id -> id % 3 == 0);
      long len = 0;
      for (long id = 0; id < ROWS + EXTRA; id++) {
        if (!deleted(id) && id % 3 == 0) {
          len += ("NAME" + id).length();
        }
      }
      // the query shape: a GROUP BY over a filtered projection of a string column
      Row agg = sql("SELECT count(*), sum(length(uname)), count(DISTINCT v2) FROM (SELECT id, "
          + "upper(name) AS uname, v * 2 AS v2 FROM " + t + " WHERE id % 3 = 0)").get(0);
      assertEquals(List.of(n, len, n), List.of(agg.getLong(0), agg.getLong(1), agg.getLong(2)),
          h + ": " + t);
      List<Row> some = sql("SELECT id, name FROM " + t + " WHERE k = 8 ORDER BY id");
      assertEquals(live(0, ROWS + EXTRA, id -> id % 1000 == 8), some.size(), h.name());
      for (Row r : some) {
        assertEquals("name" + r.getLong(0), r.getString(1));
      }
      assertEquals(List.of(8L, 1008L),
          sql("SELECT id FROM " + t + " WHERE k = 8 AND name LIKE 'name%' ORDER BY id LIMIT 2")
              .stream().map(r -> r.getLong(0)).toList(), h + ": a filtered LIMIT");
      assertEquals(live(0, ROWS + EXTRA, id -> id >= 150_000),
          sql("SELECT count(*) FROM " + t + " WHERE id >= 150000").get(0).getLong(0),
          h + ": a filtered COUNT(*)");
    }
  }

  @Test
  void rowIdsOfRewrittenFragmentsAreTheStableIds() {
    String t = table("rowids", FragmentHazard.REWRITTEN_ROW_IDS);
    Map<Long, Long> before = rowIds.get(t);
    Map<Long, Long> now = new TreeMap<>();
    for (Row r : sql("SELECT id, _rowid FROM " + t)) {
      now.put(r.getLong(0), r.getLong(1));
    }
    assertEquals(new TreeMap<>(before), now, "every row keeps its stable row id");
    List<Row> filtered = sql("SELECT id, _rowid, name FROM " + t + " WHERE k = 9 ORDER BY id");
    assertEquals(live(0, ROWS + EXTRA, id -> id % 1000 == 9), filtered.size());
    for (Row r : filtered) {
      assertEquals(before.get(r.getLong(0)), r.getLong(1), "id " + r.getLong(0));
    }
    List<Row> byRowId = sql("SELECT id FROM " + t + " WHERE _rowid = " + before.get(123_456L));
    assertEquals(List.of(123_456L), byRowId.stream().map(r -> r.getLong(0)).toList());
    String plan = spark.sql("SELECT name FROM " + t + " WHERE id > 5").queryExecution()
        .executedPlan().toString();
    assertTrue(plan.contains("no Lance filter for rewritten fragments"), plan);
  }

  @Test
  void deleteUpdateAndMergeChangeExactlyTheirRows() {
    for (FragmentHazard h : List.of(FragmentHazard.DELETIONS, FragmentHazard.REWRITTEN_ROW_IDS)) {
      String t = table("dml_" + h.name().toLowerCase(), h);
      sql("DELETE FROM " + t + " WHERE k = 9");
      sql("UPDATE " + t + " SET name = concat(name, 'u') WHERE k = 10");
      sql("CREATE OR REPLACE TEMPORARY VIEW hz_changes AS SELECT id, CAST(id % 1000 AS INT) AS k,"
          + " id / 2 AS v, 'merged' AS name FROM range(" + (ROWS - 500) + ", " + (ROWS + 500)
          + ") WHERE id % 2 = 0");
      sql("MERGE INTO " + t + " USING hz_changes c ON " + t + ".id = c.id WHEN MATCHED THEN "
          + "UPDATE SET name = c.name WHEN NOT MATCHED THEN INSERT *");
      List<String> expected = new ArrayList<>();
      for (long id = 0; id < ROWS + EXTRA; id++) {
        if (deleted(id) || id % 1000 == 9) {
          continue;
        }
        String name = "name" + id;
        if (id % 1000 == 10) {
          name += "u";
        }
        if (id >= ROWS - 500 && id < ROWS + 500 && id % 2 == 0) {
          name = "merged";
        }
        expected.add(id + "," + name);
      }
      List<String> got = sql("SELECT id, name FROM " + t + " ORDER BY id").stream()
          .map(r -> r.getLong(0) + "," + r.getString(1)).toList();
      assertEquals(expected.size(), got.size(), h.name());
      assertEquals(expected, got, h.name());
    }
  }
}
