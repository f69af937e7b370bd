package io.lancerest.spark.computed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.computed.spark.ComputedColumns;
import io.lancerest.spark.connector.read.FragmentHazard;
import io.lancerest.testing.LanceStates;
import io.lancerest.spark.mv.engine.EngineFixture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Backfills through the Java API on a real dir server and Spark: values equal the function
 * applied to every row (count and hash against Spark's own computation), incremental runs compute
 * only new and moved rows, failures keep what was committed and resume.
 */
class BackfillTest {
  private static EngineFixture f;
  private static String ns;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
    ns = f.namespace("cc_backfill");
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  @AfterEach
  void healFunction() {
    TextLength.failOn = null;
  }

  /**
   * A table of ids 0..99 in four fragments of 25 rows (one INSERT each); text 'row-<id>', NULL
   * for ids divisible by 10 when {@code nulls}; column len = TextLength(text) added.
   */
  private String table(String name, boolean nulls) {
    String t = "lance." + ns + "." + name;
    f.sql("CREATE TABLE " + t + " (id BIGINT, text STRING)");
    for (int part = 0; part < 4; part++) {
      insert(t, part * 25, part * 25 + 25, nulls);
    }
    ComputedColumns.add(f.spark, t, new ComputedColumnSpec("len", TextLength.class.getName(),
        null, List.of("text"), Map.of(), false));
    return t;
  }

  /** Rows {@code from..to-1} as one fragment (one Spark task writes them). */
  private static void insert(String t, int from, int to, boolean nulls) {
    boolean computed = List.of(f.spark.table(t).columns()).contains("len");
    try {
      f.spark.sql("SELECT id, " + (nulls ? "CASE WHEN id % 10 = 0 THEN NULL ELSE " : "")
        + "concat('row-', id)" + (nulls ? " END" : "") + " AS text"
        + (computed ? ", CAST(NULL AS BIGINT) AS len" : "") + " FROM range(" + from + ", " + to
          + ")").coalesce(1).writeTo(t).append();
    } catch (org.apache.spark.sql.catalyst.analysis.NoSuchTableException e) {
      throw new AssertionError(t + " was just created", e);
    }
  }

  /** Count and hash of (id, len) next to Spark's computation of the same function. */
  private static void assertComputed(String t) {
    Row got = f.sql("SELECT count(*), sum(hash(id, len)) FROM " + t).get(0);
    Row want = f.sql("SELECT count(*), sum(hash(id, CAST(length(text) AS BIGINT))) FROM " + t)
        .get(0);
    assertEquals(want.toString(), got.toString(), "len equals the function on every row");
  }

  private static BackfillResult backfill(String t, Map<String, String> options) {
    return ComputedColumns.backfill(f.spark, t, "len", options);
  }

  @Test
  void aFullBackfillEqualsTheFunctionAndASecondOneHasNothingToDo() {
    String t = table("full", true);
    long before = ComputedTables.version(f, ns, "full");
    BackfillResult r = backfill(t, Map.of("batch_size", "7"));
    assertEquals(new BackfillResult(4, 0, 100, 0, 0, before, before + 2), r,
        "4 fragments in one commit (default granularity 16) plus its checkpoint");
    assertComputed(t);
    assertEquals(List.of("0|null", "10|null", "1|5", "99|6"),
        f.rows("SELECT id, len FROM " + t + " WHERE id IN (0, 1, 10, 99)"));
    BackfillResult again = backfill(t, Map.of());
    assertEquals(new BackfillResult(0, 4, 0, 0, 0, before + 2, before + 2), again);
  }

  @Test
  void aSecondBackfillComputesOnlyInsertedAndUpdatedRows() {
    String t = table("incremental", true);
    backfill(t, Map.of("commit_granularity", "2"));
    insert(t, 100, 107, false);
    f.sql("UPDATE " + t + " SET text = concat(text, '!!') WHERE id IN (3, 47, 88)");
    f.sql("DELETE FROM " + t + " WHERE id IN (5, 50)");
    assertEquals(List.of("3|5", "47|6"), f.rows("SELECT id, len FROM " + t
        + " WHERE id IN (3, 47)"), "an UPDATE leaves the value stale until the next backfill");

    BackfillResult r = backfill(t, Map.of());
    assertEquals(10, r.rowsComputed(), "7 inserted + 3 updated rows: " + r);
    assertEquals(4, r.fragmentsAlreadyDone());
    assertEquals(0, r.rowsLeftForLater());
    assertComputed(t);
    assertEquals(List.of("3|7", "47|8", "88|8"), f.rows("SELECT id, len FROM " + t
        + " WHERE id IN (3, 47, 88)"));
    assertEquals(105, f.sql("SELECT count(*) FROM " + t).get(0).getLong(0));
  }

  @Test
  void aFailingFunctionFailsNamingTheCauseKeepsCommittedFragmentsAndResumes() {
    String t = table("failing", false);
    long before = ComputedTables.version(f, ns, "failing");
    TextLength.failOn = "row-60";
    ComputedColumnException e = assertThrows(ComputedColumnException.class,
        () -> backfill(t, Map.of("commit_granularity", "1", "batch_size", "10")));
    assertEquals("Backfill of computed column 'len' of table " + t + ": the function failed on "
        + "fragment 2 (rows 10..19): java.lang.IllegalStateException: cannot measure 'row-60'. "
        + "Fix the function or its options and backfill again: fragments already committed are "
        + "kept, or use error_handling = 'skip'.", e.getMessage());
    assertEquals(50, f.sql("SELECT count(*) FROM " + t + " WHERE len IS NOT NULL").get(0)
        .getLong(0), "fragments 0 and 1 were committed before fragment 2 failed");
    assertEquals(before + 4, ComputedTables.version(f, ns, "failing"),
        "two fragments, each with its checkpoint");

    TextLength.failOn = null;
    BackfillResult r = backfill(t, Map.of("commit_granularity", "1"));
    assertEquals(2, r.fragmentsAlreadyDone());
    assertEquals(2, r.fragmentsComputed());
    assertEquals(50, r.rowsComputed());
    assertComputed(t);
  }

  @Test
  void retryCallsAFailingBatchAgainThenFails() {
    String t = table("retried", false);
    TextLength.failOn = "row-7";
    ComputedColumnException e = assertThrows(ComputedColumnException.class,
        () -> backfill(t, Map.of("error_handling", "retry", "retries", "2")));
    assertTrue(e.getMessage().contains("after 3 attempts: java.lang.IllegalStateException: "
        + "cannot measure 'row-7'"), e.getMessage());
  }

  @Test
  void skipLeavesTheFailingBatchNullAndCountsIt() {
    String t = table("skipping", false);
    TextLength.failOn = "row-33";
    BackfillResult r = backfill(t, Map.of("error_handling", "skip", "batch_size", "4"));
    assertEquals(4, r.rowsSkipped(), "the batch of rows 33..36 (fragment 1 starts at id 25)");
    assertEquals(96, r.rowsComputed());
    assertEquals(List.of("33", "34", "35", "36"),
        f.rows("SELECT CAST(id AS STRING) FROM " + t + " WHERE len IS NULL"));

    TextLength.failOn = null;
    BackfillResult again = backfill(t, Map.of());
    assertEquals(3, again.fragmentsAlreadyDone(), "the fragment with skipped rows is not done");
    assertEquals(25, again.rowsComputed());
    assertComputed(t);
  }

  @Test
  void whereComputesOnlyMatchingRowsAndALaterBackfillTheRest() {
    String t = table("filtered", false);
    BackfillResult r = ComputedColumns.backfill(f.spark, t, "len",
        Map.of("where", "id < 30 OR text = 'row-99'"));
    assertEquals(31, r.rowsComputed());
    assertEquals(31, f.sql("SELECT count(*) FROM " + t + " WHERE len IS NOT NULL").get(0)
        .getLong(0));
    BackfillResult rest = backfill(t, Map.of());
    assertEquals(1, rest.fragmentsAlreadyDone(), "fragment 0 matched entirely: " + rest);
    assertEquals(75, rest.rowsComputed());
    assertComputed(t);
  }

  @Test
  void fragmentsWithDeletionsAndCompactedFragmentsAreReadByPosition() {
    String t = table("compacted", false);
    f.sql("DELETE FROM " + t + " WHERE id % 7 = 3");
    BackfillResult r = backfill(t, Map.of());
    assertEquals(86, r.rowsComputed(), "the live rows of fragments with deletions");
    assertComputed(t);

    LanceStates.compactDroppingDeletions(ComputedTables.uri(f, ns, "compacted"));
    assertEquals(List.of(FragmentHazard.REWRITTEN_ROW_IDS), ComputedTables.at(f, ns,
        "compacted", ds -> ds.getFragments().stream().map(x -> FragmentHazard.of(x.metadata()))
            .distinct().toList()), "compaction left row-id sequences with holes");
    f.sql("REFRESH TABLE " + t);
    BackfillResult again = backfill(t, Map.of());
    assertEquals(0, again.fragmentsAlreadyDone(), "compaction made new fragments");
    assertEquals(86, again.rowsComputed());
    assertComputed(t);
  }

  @Test
  void dateAndTimestampInputsArriveWithSparksExternalTypes() {
    String t = "lance." + ns + ".typed";
    f.sql("CREATE TABLE " + t + " (id BIGINT, d DATE, ts TIMESTAMP)");
    f.sql("INSERT INTO " + t + " SELECT id, date_add(DATE'1990-01-01', CAST(id * 400 AS INT)), "
        + "CASE WHEN id = 3 THEN NULL ELSE timestamp_seconds(id * 7200) END FROM range(0, 20)");
    ComputedColumns.add(f.spark, t, new ComputedColumnSpec("code", YearOf.class.getName(), null,
        List.of("d", "ts"), Map.of(), false));
    ComputedColumns.backfill(f.spark, t, "code", Map.of());
    assertEquals(0, f.sql("SELECT count(*) FROM " + t + " WHERE code IS NULL OR code <> "
        + "year(d) * 10000 + coalesce(hour(ts), 0)").get(0).getLong(0));
  }

  @Test
  void aColumnDroppedAndAddedAgainIsComputedAgain() {
    String t = table("readded", false);
    backfill(t, Map.of());
    f.sql("ALTER TABLE " + t + " DROP COLUMN len");
    ComputedColumns.add(f.spark, t, new ComputedColumnSpec("len", TextLength.class.getName(),
        null, List.of("text"), Map.of(), false));
    assertEquals(100, f.sql("SELECT count(*) FROM " + t + " WHERE len IS NULL").get(0)
        .getLong(0));
    BackfillResult r = backfill(t, Map.of());
    assertEquals(0, r.fragmentsAlreadyDone(), r.toString());
    assertEquals(100, r.rowsComputed());
    assertComputed(t);
  }

  @Test
  void rowsCommittedAfterTheReadVersionAreLeftForTheNextBackfill() {
    String t = table("later", false);
    long v = ComputedTables.version(f, ns, "later");
    insert(t, 100, 112, false);
    BackfillResult r = backfill(t, Map.of("read_version", Long.toString(v)));
    assertEquals(100, r.rowsComputed());
    assertEquals(12, r.rowsLeftForLater());
    assertEquals(12, f.sql("SELECT count(*) FROM " + t + " WHERE len IS NULL").get(0)
        .getLong(0));
    assertEquals(12, backfill(t, Map.of()).rowsComputed());
    assertComputed(t);
  }

  @Test
  void aVectorColumnIsFilledAndAWrongLengthIsRefusedBeforeAnythingIsCommitted() {
    String t = table("vectors", false);
    ComputedColumns.add(f.spark, t, new ComputedColumnSpec("emb", TextVector4.class.getName(),
        null, List.of("text"), Map.of(), false));
    ComputedColumns.backfill(f.spark, t, "emb", Map.of());
    Row r = f.sql("SELECT emb FROM " + t + " WHERE id = 42").get(0);
    float[] want = TextVector4.of("row-42");
    List<Object> got = r.getList(0);
    assertEquals(4, got.size());
    for (int i = 0; i < 4; i++) {
      assertEquals(want[i], ((Number) got.get(i)).floatValue());
    }
    ComputedColumns.add(f.spark, t, new ComputedColumnSpec("bad", TextVector4.class.getName(),
        null, List.of("text"), Map.of("size", "3"), false));
    long before = ComputedTables.version(f, ns, "vectors");
    ComputedColumnException e = assertThrows(ComputedColumnException.class,
        () -> ComputedColumns.backfill(f.spark, t, "bad", Map.of("commit_granularity", "1")));
    assertEquals("Backfill of column 'bad' of table " + t + ": on 16 rows of fragment "
        + "0, tried before anything was committed, the function returned a vector of 3 floats "
        + "where the column holds 4. Fix the function (or the column's declared type) and "
        + "backfill again; nothing was committed.", e.getMessage());
    assertEquals(before, ComputedTables.version(f, ns, "vectors"));
  }

  @Test
  void badBackfillsAreRefusedAndCommitNothing() {
    String t = table("refused", false);
    long before = ComputedTables.version(f, ns, "refused");
    assertEquals("Backfill of column 'text' of table " + t + ": column 'text' is not a computed "
        + "column (its field metadata has no 'lancerest:computed'); only computed columns can "
        + "be backfilled.", assertThrows(ComputedColumnException.class,
            () -> ComputedColumns.backfill(f.spark, t, "text", Map.of())).getMessage());
    assertEquals("Backfill of column 'len' of table " + t + ": unknown option 'batchsize'. "
        + "Known options: batch_size, commit_granularity, read_version, error_handling, "
        + "retries, where.", assertThrows(ComputedColumnException.class,
            () -> backfill(t, Map.of("batchsize", "3"))).getMessage());
    String bad = assertThrows(ComputedColumnException.class,
        () -> backfill(t, Map.of("where", "id <"))).getMessage();
    assertTrue(bad.startsWith("Backfill of column 'len' of table " + t + ": WHERE id < is not "
        + "a condition on the table's columns: "), bad);
    String unknown = assertThrows(ComputedColumnException.class,
        () -> backfill(t, Map.of("where", "size > 3"))).getMessage();
    assertTrue(unknown.contains("`size`"), unknown);
    assertEquals(before, ComputedTables.version(f, ns, "refused"));
    assertNotEquals(0, before);
  }
}
