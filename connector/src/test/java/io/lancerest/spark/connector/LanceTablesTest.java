package io.lancerest.spark.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.spark.LancePositionDeltaDataset;

/**
 * The connector end to end on local Lance datasets: one shared local Spark session, a directory
 * catalog that delegates to {@link LanceTables}, no REST server.
 */
class LanceTablesTest {

  @TempDir static Path root;

  private static SparkSession spark;
  private static DirectoryTestCatalog catalog;

  @BeforeAll
  static void startSpark() {
    spark =
        SparkSession.builder()
            .master("local[2]")
            .appName("connector-test")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.sql.catalog.lt", DirectoryTestCatalog.class.getName())
            .config("spark.sql.catalog.lt.root", root.toString())
            .getOrCreate();
    catalog = new DirectoryTestCatalog();
    catalog.initialize(
        "lt",
        new org.apache.spark.sql.util.CaseInsensitiveStringMap(Map.of("root", root.toString())));
  }

  @AfterAll
  static void stopSpark() {
    if (spark != null) {
      spark.stop();
    }
  }

  private static TableHandle handle(String name) {
    return catalog.handle(Identifier.of(new String[] {"db"}, name));
  }

  private static List<String> rows(String sql) {
    List<String> out = new ArrayList<>();
    for (Row r : spark.sql(sql).collectAsList()) {
      out.add(r.mkString(","));
    }
    return out;
  }

  private static long version(String name) {
    return LanceTables.latestVersion(handle(name));
  }

  @Test
  void createInsertAndReadThroughLanceSpark() {
    spark.sql("CREATE TABLE lt.db.basic (id BIGINT, name STRING) TBLPROPERTIES ('team'='data')");
    assertEquals(1, version("basic"), "create is one commit");
    spark.sql("INSERT INTO lt.db.basic VALUES (1, 'a'), (2, 'b'), (3, 'c')");

    assertEquals(List.of("1,a", "2,b", "3,c"), rows("SELECT * FROM lt.db.basic ORDER BY id"));
    assertEquals(2, version("basic"));
    Table table = LanceTables.loadTable(handle("basic"), "lt");
    assertInstanceOf(LancePositionDeltaDataset.class, table);
    assertEquals("data", LanceTableAlterations.properties(handle("basic")).get("team"));
  }

  @Test
  void timeTravelByVersionTagAndTimestamp() throws Exception {
    spark.sql("CREATE TABLE lt.db.travel (id BIGINT)");
    spark.sql("INSERT INTO lt.db.travel VALUES (1), (2)");
    Instant afterFirstInsert = Instant.now();
    Thread.sleep(20);
    spark.sql("INSERT INTO lt.db.travel VALUES (3)");
    try (Dataset ds = Dataset.open(handle("travel").location())) {
      ds.tags().create("first_load", 2);
    }

    assertEquals(List.of("3"), rows("SELECT count(*) FROM lt.db.travel"));
    assertEquals(List.of("2"), rows("SELECT count(*) FROM lt.db.travel VERSION AS OF 2"));
    assertEquals(List.of("2"), rows("SELECT count(*) FROM lt.db.travel VERSION AS OF 'first_load'"));
    assertEquals(2, LanceTables.resolveTimestamp(handle("travel"), afterFirstInsert));
    assertEquals(2, LanceTables.resolveTag(handle("travel"), "first_load"));
    Table pinned = LanceTables.loadTable(handle("travel").withVersion(1L), "lt");
    assertEquals(1, pinned.schema().fields().length);

    UnknownTableVersionException noVersion =
        assertThrows(
            UnknownTableVersionException.class,
            () -> LanceTables.loadTableAtVersion(handle("travel"), 99, "lt"));
    assertTrue(noVersion.getMessage().contains("db.travel"), noVersion.getMessage());
    assertTrue(noVersion.getMessage().contains("version 99"), noVersion.getMessage());
    assertTrue(noVersion.getMessage().contains("1..3"), noVersion.getMessage());

    UnknownTableVersionException noTag =
        assertThrows(
            UnknownTableVersionException.class,
            () -> LanceTables.loadTableAtVersionOrTag(handle("travel"), "nightly", "lt"));
    assertTrue(noTag.getMessage().contains("tag 'nightly'"), noTag.getMessage());
    assertTrue(noTag.getMessage().contains("first_load"), noTag.getMessage());

    assertThrows(
        UnknownTableVersionException.class,
        () -> LanceTables.resolveTimestamp(handle("travel"), Instant.EPOCH));
  }

  /**
   * A version opens without listing the others, which are listed only to explain a failed open:
   * a version a cleanup removed is unknown, with the versions that are left.
   */
  @Test
  void aCleanedUpVersionIsUnknownAndTheOthersStillOpen() throws Exception {
    spark.sql("CREATE TABLE lt.db.cleaned (id BIGINT)");
    spark.sql("INSERT INTO lt.db.cleaned VALUES (1)");
    spark.sql("INSERT INTO lt.db.cleaned VALUES (2)");
    spark.sql("INSERT INTO lt.db.cleaned VALUES (3)");
    try (Dataset ds = Dataset.open(handle("cleaned").location())) {
      ds.cleanupWithPolicy(
          org.lance.cleanup.CleanupPolicy.builder().withBeforeVersion(3L).build());
    }
    assertEquals(List.of("2"), rows("SELECT count(*) FROM lt.db.cleaned VERSION AS OF 3"));
    UnknownTableVersionException gone =
        assertThrows(
            UnknownTableVersionException.class,
            () -> LanceTables.loadTableAtVersion(handle("cleaned"), 2, "lt"));
    assertTrue(gone.getMessage().contains("db.cleaned"), gone.getMessage());
    assertTrue(gone.getMessage().contains("version 2"), gone.getMessage());
    assertTrue(gone.getMessage().contains("3..4"), gone.getMessage());
    assertTrue(gone.getMessage().contains("cleaned up"), gone.getMessage());
    UnknownTableVersionException negative =
        assertThrows(
            UnknownTableVersionException.class,
            () -> LanceTables.loadTableAtVersion(handle("cleaned"), -1, "lt"));
    assertTrue(negative.getMessage().contains("version -1"), negative.getMessage());
    assertTrue(negative.getMessage().contains("numbered from 1"), negative.getMessage());
  }

  @Test
  void deleteAndUpdateGoThroughTheRowLevelPath() {
    spark.sql("CREATE TABLE lt.db.dml (id BIGINT, name STRING)");
    spark.sql("INSERT INTO lt.db.dml VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    spark.sql("DELETE FROM lt.db.dml WHERE id = 1");
    spark.sql("UPDATE lt.db.dml SET name = 'z' WHERE id = 2");
    spark.sql(
        "MERGE INTO lt.db.dml t USING (SELECT 3L AS id, 'm' AS name UNION ALL SELECT 4L, 'n') s"
            + " ON t.id = s.id WHEN MATCHED THEN UPDATE SET name = s.name"
            + " WHEN NOT MATCHED THEN INSERT *");

    assertEquals(List.of("2,z", "3,m", "4,n"), rows("SELECT * FROM lt.db.dml ORDER BY id"));
    assertEquals(5, version("dml"), "create, insert, delete, update, merge: one commit each");
  }

  @Test
  void stableRowIdsSurviveUpdatesAndCompaction() {
    spark.sql("CREATE TABLE lt.db.rowids (id BIGINT, name STRING)");
    spark.sql("INSERT INTO lt.db.rowids VALUES (1, 'a'), (2, 'b')");
    spark.sql("INSERT INTO lt.db.rowids VALUES (3, 'c'), (4, 'd')");
    Map<Long, Long> before = rowIds("rowids");
    Map<Long, Long> addressesBefore = rowAddresses("rowids");

    spark.sql("UPDATE lt.db.rowids SET name = 'z' WHERE id = 2");
    try (Dataset ds = Dataset.open(handle("rowids").location())) {
      ds.compact(); // moves rows to new fragments: addresses change, stable ids must not
    }
    Map<Long, Long> after = rowIds("rowids");
    Map<Long, Long> addressesAfter = rowAddresses("rowids");
    for (long untouched : List.of(1L, 3L, 4L)) {
      assertEquals(before.get(untouched), after.get(untouched), "row id of id=" + untouched);
      assertFalse(
          addressesBefore.get(untouched).equals(addressesAfter.get(untouched)),
          "compaction should have moved id=" + untouched);
    }
    assertEquals(4, after.size());
    assertEquals(List.of("1,a", "2,z", "3,c", "4,d"), rows("SELECT * FROM lt.db.rowids ORDER BY id"));
  }

  private static Map<Long, Long> rowIds(String table) {
    Map<Long, Long> ids = new TreeMap<>();
    spark
        .sql("SELECT id, _rowid FROM lt.db." + table)
        .collectAsList()
        .forEach(r -> ids.put(r.getLong(0), r.getLong(1)));
    return ids;
  }

  private static Map<Long, Long> rowAddresses(String table) {
    Map<Long, Long> ids = new TreeMap<>();
    spark
        .sql("SELECT id, _rowaddr FROM lt.db." + table)
        .collectAsList()
        .forEach(r -> ids.put(r.getLong(0), r.getLong(1)));
    return ids;
  }

  @Test
  void ctasAndRtasCommitOnceAndFailedCtasLeavesNoDirectory() {
    spark.sql("CREATE TABLE lt.db.ctas AS SELECT id, CAST(id AS STRING) AS s FROM range(5)");
    assertEquals(List.of("5"), rows("SELECT count(*) FROM lt.db.ctas"));
    assertEquals(2, version("ctas"), "empty create, then the data in one Overwrite commit");
    Map<Long, Long> ids = rowIds("ctas");
    assertEquals(5, ids.values().stream().distinct().count());

    spark.sql("REPLACE TABLE lt.db.ctas AS SELECT id * 10 AS id FROM range(3)");
    assertEquals(List.of("0", "10", "20"), rows("SELECT * FROM lt.db.ctas ORDER BY id"));
    assertEquals(3, version("ctas"), "RTAS is a single Overwrite commit");
    assertEquals(List.of("5"), rows("SELECT count(*) FROM lt.db.ctas VERSION AS OF 2"));

    // A failing RTAS leaves the table as it was.
    assertThrows(
        Exception.class,
        () ->
            spark.sql(
                "REPLACE TABLE lt.db.ctas AS SELECT id, "
                    + "CASE WHEN id = 2 THEN raise_error('boom') ELSE 'x' END AS s FROM range(4)"));
    assertEquals(List.of("0", "10", "20"), rows("SELECT * FROM lt.db.ctas ORDER BY id"));

    // A failing CTAS leaves nothing at its location.
    Path failedDir = Path.of(handle("ctas_failed").location());
    assertThrows(
        Exception.class,
        () ->
            spark.sql(
                "CREATE TABLE lt.db.ctas_failed AS SELECT id, "
                    + "CASE WHEN id = 2 THEN raise_error('boom') ELSE 'x' END AS s FROM range(4)"));
    assertFalse(Files.exists(failedDir), "failed CTAS left " + failedDir);
    assertFalse(LanceTables.datasetExists(failedDir.toString(), Map.of()));
  }

  @Test
  void stagedCreateReportsCommitAndAbortToTheCatalog() {
    StructType schema =
        new StructType().add("id", DataTypes.LongType).add("v", DataTypes.DoubleType);
    AtomicLong committed = new AtomicLong(-1);
    AtomicReference<TableHandle> aborted = new AtomicReference<>();
    StagedTableListener listener =
        new StagedTableListener() {
          @Override
          public void committed(TableHandle table, long version) {
            committed.set(version);
          }

          @Override
          public void aborted(TableHandle table) {
            aborted.set(table);
          }
        };

    StagedTable schemaOnly =
        LanceTables.stageCreate(handle("staged_ok"), schema, Map.of("k", "v"), true, "lt", listener);
    schemaOnly.commitStagedChanges();
    assertEquals(2, committed.get());
    assertEquals(schema, LanceTables.loadTable(handle("staged_ok"), "lt").schema());
    assertEquals("v", LanceTableAlterations.properties(handle("staged_ok")).get("k"));

    StagedTable abandoned =
        LanceTables.stageCreate(handle("staged_abort"), schema, Map.of(), true, "lt", listener);
    assertTrue(Files.exists(Path.of(handle("staged_abort").location())));
    abandoned.abortStagedChanges();
    assertEquals(handle("staged_abort"), aborted.get());
    assertFalse(Files.exists(Path.of(handle("staged_abort").location())));
  }

  @Test
  void propertiesPersistInTheDatasetAfterReopening() {
    spark.sql("CREATE TABLE lt.db.props (id BIGINT)");
    spark.sql("ALTER TABLE lt.db.props SET TBLPROPERTIES ('owner_team'='mv', 'tier'='gold')");
    Map<String, String> props = LanceTableAlterations.properties(handle("props"));
    assertEquals("mv", props.get("owner_team"));
    assertEquals("gold", props.get("tier"));

    spark.sql("ALTER TABLE lt.db.props UNSET TBLPROPERTIES ('tier')");
    props = LanceTableAlterations.properties(handle("props"));
    assertEquals("mv", props.get("owner_team"));
    assertFalse(props.containsKey("tier"));
    assertFalse(props.containsKey(LanceTables.ENABLE_STABLE_ROW_IDS), "a feature, not config");
  }

  @Test
  void columnChangesEvolveTheDatasetSchema() {
    spark.sql("CREATE TABLE lt.db.cols (id BIGINT NOT NULL, n INT, old STRING, gone STRING)");
    spark.sql("INSERT INTO lt.db.cols VALUES (1, 7, 'x', 'y')");

    spark.sql("ALTER TABLE lt.db.cols ADD COLUMNS (extra STRING)");
    spark.sql("ALTER TABLE lt.db.cols RENAME COLUMN old TO renamed");
    spark.sql("ALTER TABLE lt.db.cols ALTER COLUMN n TYPE BIGINT");
    spark.sql("ALTER TABLE lt.db.cols DROP COLUMN gone");
    spark.sql("ALTER TABLE lt.db.cols ALTER COLUMN id DROP NOT NULL");

    StructType schema = LanceTables.loadTable(handle("cols"), "lt").schema();
    assertEquals(
        List.of("id", "n", "renamed", "extra"), List.of(schema.fieldNames()), schema.treeString());
    assertEquals(DataTypes.LongType, schema.apply("n").dataType());
    assertTrue(schema.apply("id").nullable());
    assertEquals(List.of("1,7,x,null"), rows("SELECT * FROM lt.db.cols"));

    LanceTableException notNull =
        assertThrows(
            LanceTableException.class,
            () ->
                LanceTableAlterations.addColumns(
                    handle("cols"),
                    List.of(new StructField("req", DataTypes.IntegerType, false, Metadata.empty()))));
    assertEquals(LanceTableException.Reason.INVALID_CHANGE, notNull.reason());
    assertTrue(notNull.getMessage().contains("req"), notNull.getMessage());
  }

  @Test
  void managedVersioningTablesRefuseDirectChanges() {
    spark.sql("CREATE TABLE lt.db.managed (id BIGINT)");
    TableHandle managed = handle("managed").toBuilder().managedVersioning(true).build();
    long before = version("managed");

    ManagedVersioningException props =
        assertThrows(
            ManagedVersioningException.class,
            () -> LanceTableAlterations.setProperties(managed, Map.of("k", "v")));
    assertTrue(props.getMessage().contains("db.managed"), props.getMessage());
    assertTrue(props.getMessage().contains("managed_versioning"), props.getMessage());
    assertThrows(
        ManagedVersioningException.class,
        () -> LanceTableAlterations.unsetProperties(managed, Set.of("k")));
    assertThrows(
        ManagedVersioningException.class,
        () ->
            LanceTableAlterations.addColumns(
                managed,
                List.of(new StructField("c", DataTypes.IntegerType, true, Metadata.empty()))));
    assertThrows(
        ManagedVersioningException.class,
        () -> LanceTableAlterations.dropColumns(managed, List.of("id")));
    assertThrows(
        ManagedVersioningException.class,
        () -> LanceTableAlterations.renameColumn(managed, new String[] {"id"}, "x"));
    assertThrows(
        ManagedVersioningException.class,
        () ->
            LanceTableAlterations.alterColumnType(
                managed, new String[] {"id"}, DataTypes.StringType));
    assertThrows(
        ManagedVersioningException.class,
        () -> LanceTableAlterations.dropNotNull(managed, new String[] {"id"}));
    assertEquals(before, version("managed"), "nothing was committed");
  }

  @Test
  void ofConcurrentCreatesAtOneLocationExactlyOneWinsAndNoneOverwrites() throws Exception {
    for (int round = 0; round < 3; round++) {
      TableHandle h = handle("raced" + round);
      int n = 4;
      java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(n);
      List<Object> outcomes = java.util.Collections.synchronizedList(new ArrayList<>());
      List<Thread> threads = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        StructType schema = new StructType().add("c" + i, DataTypes.LongType);
        Thread t = new Thread(() -> {
          try {
            start.await();
            outcomes.add(LanceTables.createDataset(h, schema, Map.of("k", "v"), true));
          } catch (Exception e) {
            outcomes.add(e);
          }
        });
        threads.add(t);
        t.start();
      }
      for (Thread t : threads) {
        t.join(60_000);
      }
      assertEquals(List.of(1L), outcomes.stream().filter(o -> o instanceof Long).toList(),
          "round " + round + ": exactly one creator wins: " + outcomes);
      for (Object o : outcomes) {
        if (o instanceof LanceTableException e) {
          assertEquals(LanceTableException.Reason.ALREADY_EXISTS, e.reason(), e.getMessage());
          assertEquals("Cannot create table db.raced" + round + ": a Lance dataset already exists"
              + " at " + h.location() + ". Drop it with PURGE or choose another location.",
              e.getMessage());
        } else {
          assertInstanceOf(Long.class, o);
        }
      }
      try (Dataset ds = Dataset.open(h.location())) {
        assertEquals(1, ds.listVersions().size(), "nothing was committed over the winner");
        assertEquals("v", ds.getConfig().get("k"));
      }
    }
  }

  @Test
  void purgeRemovesTheDatasetAndCreateRefusesAnExistingOne() {
    TableHandle h = handle("purged");
    StructType schema = new StructType().add("id", DataTypes.LongType);
    LanceTables.createDataset(h, schema, Map.of(), false);
    LanceTableException exists =
        assertThrows(
            LanceTableException.class, () -> LanceTables.createDataset(h, schema, Map.of(), false));
    assertEquals(LanceTableException.Reason.ALREADY_EXISTS, exists.reason());

    LanceTables.purge(h.location(), h.storageOptions());
    assertFalse(Files.exists(Path.of(h.location())));
    LanceTables.purge(h.location(), h.storageOptions()); // idempotent

    LanceTableException missing =
        assertThrows(LanceTableException.class, () -> LanceTables.loadTable(h, "lt"));
    assertEquals(LanceTableException.Reason.NOT_FOUND, missing.reason());
    assertTrue(missing.getMessage().contains("db.purged"), missing.getMessage());
  }
}
