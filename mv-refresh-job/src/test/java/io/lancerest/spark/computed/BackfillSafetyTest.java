package io.lancerest.spark.computed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lancerest.spark.computed.spark.ComputedColumns;
import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.engine.CatalogBinding;
import io.lancerest.spark.mv.engine.EngineFixture;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a backfill must leave alone: the table's properties and the other computed columns'
 * checkpoints, the values a {@code where} keeps, and columns computed from computed columns
 * (refused: their values would go stale unseen).
 */
class BackfillSafetyTest {
  private static EngineFixture f;
  private static String ns;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
    ns = f.namespace("cc_safety");
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  /** A table of ids {@code 0..rows-1}, text 'row-<id>', in {@code parts} fragments. */
  private static String table(String name, int rows, int parts, String properties) {
    String t = "lance." + ns + "." + name;
    f.sql("CREATE TABLE " + t + " (id BIGINT, text STRING)" + properties);
    int per = rows / parts;
    for (int p = 0; p < parts; p++) {
      f.sql("INSERT INTO " + t + " SELECT id, concat('row-', id) FROM range(" + p * per + ", "
          + (p + 1) * per + ")");
    }
    return t;
  }

  private static void add(String t, String column, Class<?> fn, String input) {
    ComputedColumns.add(f.spark, t, new ComputedColumnSpec(column, fn.getName(), null,
        List.of(input), Map.of(), false));
  }

  @Test
  void aBackfillKeepsTheTablePropertiesAndTheOtherColumnsCheckpoints() {
    String t = table("props", 40, 2, " TBLPROPERTIES ('team' = 'search')");
    add(t, "len", TextLength.class, "text");
    add(t, "up", TextUpper.class, "text");
    long fragments = ComputedTables.at(f, ns, "props", ds -> ds.getFragments().size());
    assertEquals(fragments, ComputedColumns.backfill(f.spark, t, "len", Map.of())
        .fragmentsComputed());
    assertEquals(fragments, ComputedColumns.backfill(f.spark, t, "up", Map.of())
        .fragmentsComputed());
    BackfillResult again = ComputedColumns.backfill(f.spark, t, "len", Map.of());
    assertEquals(0, again.fragmentsComputed(), again.toString());
    assertEquals(fragments, again.fragmentsAlreadyDone(), again.toString());
    assertEquals("search", ComputedTables.at(f, ns, "props", ds -> ds.getConfig())
        .get("team"), "the table property survives both backfills");
    assertEquals(40L, f.sql("SELECT count(*) FROM " + t + " WHERE len = length(text) AND up = "
        + "upper(text)").get(0).getLong(0));
  }

  @Test
  void aStringColumnFilledByTwoWhereBackfillsHoldsEveryValue() {
    String t = table("halves", 50, 1, "");
    add(t, "up", TextUpper.class, "text");
    assertEquals(25, ComputedColumns.backfill(f.spark, t, "up", Map.of("where", "id % 2 = 0"))
        .rowsComputed());
    assertEquals(25, ComputedColumns.backfill(f.spark, t, "up", Map.of("where", "id % 2 = 1"))
        .rowsComputed());
    assertEquals(50L, f.sql("SELECT count(*) FROM " + t + " WHERE up = upper(text)").get(0)
        .getLong(0), "the values the second backfill kept are the first one's");
  }

  @Test
  void fragmentsThatChangedWhileComputedAreLeftForLaterNotCountedOrRecorded() {
    String t = table("raced", 20, 1, "");
    add(t, "len", TextLength.class, "text");
    LanceLocation location = CatalogBinding.of(f.spark, EngineFixture.CATALOG)
        .locate(List.of(ns, "raced"), "table").dataset();
    // another backfill of the column lands between this one's read and its commit
    FragmentRunner racing = (spec, tasks) -> {
      List<FragmentResult> results = FragmentRunner.local().run(spec, tasks);
      ComputedColumns.backfill(f.spark, t, "len", Map.of());
      return results;
    };
    BackfillResult r = Backfill.run(t, location, "len", BackfillOptions.defaults(), s -> null,
        racing);
    assertEquals(0, r.fragmentsComputed(), r.toString());
    assertEquals(0, r.rowsComputed(), r.toString());
    assertEquals(20, r.rowsLeftForLater(), r.toString());
    BackfillResult after = ComputedColumns.backfill(f.spark, t, "len", Map.of());
    assertEquals(0, after.fragmentsComputed(), "the other backfill's fragments are done: "
        + after);
    assertEquals(20L, f.sql("SELECT count(*) FROM " + t + " WHERE len = length(text)").get(0)
        .getLong(0));
  }

  @Test
  void aReadVersionBeforeTheColumnWasRedefinedIsRefused() {
    String t = table("readded", 10, 1, "");
    add(t, "len", TextLength.class, "text");
    long old = ComputedTables.version(f, ns, "readded");
    f.sql("ALTER TABLE " + t + " DROP COLUMN len");
    // added again with another definition (lance-core may give it the dropped column's field id)
    ComputedColumns.add(f.spark, t, new ComputedColumnSpec("len", TextLength.class.getName(),
        null, List.of("text"), Map.of("plus", "1"), false));
    long before = ComputedTables.version(f, ns, "readded");
    ComputedColumnException e = assertThrows(ComputedColumnException.class,
        () -> ComputedColumns.backfill(f.spark, t, "len", Map.of("read_version",
            Long.toString(old))));
    assertEquals("Backfill of column 'len' of table " + t + ": at read_version " + old + " the "
        + "column is not the one the table has now (it was dropped, added again or redefined "
        + "since). Backfill without read_version, or with a version from after that change.",
        e.getMessage());
    assertEquals(before, ComputedTables.version(f, ns, "readded"), "nothing committed");
  }

  @Test
  void aComputedColumnCannotReadAnotherComputedColumn() {
    String t = table("chained", 10, 1, "");
    add(t, "up", TextUpper.class, "text");
    long before = ComputedTables.version(f, ns, "chained");
    ComputedColumnException e = assertThrows(ComputedColumnException.class,
        () -> add(t, "up2", TextUpper.class, "up"));
    assertEquals("Computed column 'up2' of table " + t + ": input column 'up' is itself a "
        + "computed column, and a computed column reads stored columns only. Compute it from the "
        + "columns 'up' is computed from.", e.getMessage());
    assertEquals(before, ComputedTables.version(f, ns, "chained"), "nothing committed");
  }
}
