package io.lancerest.spark.catalog;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.DeclareTableRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.spark.SparkException;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.NonEmptyNamespaceException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The contract every backend of the catalog must keep, run once per server kind. Capability
 * flags say where a backend legitimately differs (the directory server cannot rename tables or
 * keep table properties); there the test asserts the clean error instead of the happy path.
 *
 * <p>Cases whose outcome does not depend on what the server can do (the Lance data path: DML,
 * time travel, column changes, staging failures, names, the cache) run against one backend
 * only, {@link #runsServerIndependentCases()}; the other reports them as skipped. Paging cases
 * run where the server pages its lists.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class CatalogContractTest {
  protected SharedSpark shared;
  protected SparkSession spark;
  protected LanceRestClient rest;

  /** The Spark catalog under test. */
  abstract String catalog();

  /** The server implements RenameTable. */
  abstract boolean supportsRename();

  /** The server keeps table properties (DescribeTable answers them). */
  abstract boolean serverKeepsProperties();

  /** The server answers lists in pages (the directory server returns everything at once). */
  abstract boolean pagesLists();

  /** This backend also runs the cases that go the same way on every server. */
  abstract boolean runsServerIndependentCases();

  private String readOnly;

  @BeforeAll
  void startShared() {
    shared = SharedSpark.get();
    spark = shared.spark;
    rest = shared.server.newClient();
  }

  @AfterAll
  void closeClient() {
    rest.close();
  }

  protected List<Row> sql(String statement) {
    return spark.sql(statement).collectAsList();
  }

  protected LanceRestCatalog cat() {
    return (LanceRestCatalog) spark.sessionState().catalogManager().catalog(catalog());
  }

  /** A fresh namespace name (not created). */
  protected String freshName() {
    return SharedSpark.unique("ns");
  }

  /** A fresh namespace under the catalog; returns {@code <catalog>.<ns>}. */
  protected String newNamespace() {
    String ns = catalog() + "." + freshName();
    sql("CREATE NAMESPACE " + ns);
    return ns;
  }

  /** {@code <catalog>.<ns>.t} with rows (1,'a'), (2,'b'), (3,'c'). */
  protected String newTable() {
    String t = newNamespace() + ".t";
    sql("CREATE TABLE " + t + " (id BIGINT, name STRING)");
    sql("INSERT INTO " + t + " VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    return t;
  }

  /**
   * One table per class, {@code (1,'a'), (2,'b'), (3,'c')} at version 2, for cases that only
   * read it or whose statements must fail without changing it.
   */
  protected String readOnlyTable() {
    if (readOnly == null) {
      readOnly = newTable();
    }
    return readOnly;
  }

  /** Skips a case this backend leaves to the one that runs the server-independent cases. */
  protected void serverIndependent() {
    assumeTrue(runsServerIndependentCases(),
        "the same on every server; run by the backend with runsServerIndependentCases()");
  }

  protected List<Long> ids(String table) {
    return sql("SELECT id FROM " + table + " ORDER BY id").stream().map(r -> r.getLong(0))
        .collect(Collectors.toList());
  }

  protected static String[] nsOf(String qualified) {
    String[] parts = qualified.split("\\.");
    return Arrays.copyOfRange(parts, 1, parts.length);
  }

  protected static Identifier ident(String qualifiedTable) {
    String[] p = nsOf(qualifiedTable);
    return Identifier.of(Arrays.copyOf(p, p.length - 1), p[p.length - 1]);
  }

  protected Map<String, String> tblProperties(String table) {
    return sql("SHOW TBLPROPERTIES " + table).stream()
        .collect(Collectors.toMap(r -> r.getString(0), r -> r.getString(1)));
  }

  protected String describeExtended(String table) {
    return sql("DESCRIBE TABLE EXTENDED " + table).stream()
        .map(r -> r.getString(0) + "=" + r.getString(1))
        .collect(Collectors.joining("\n"));
  }

  protected Path location(String table) throws Exception {
    Table t = cat().loadTable(ident(table));
    return Paths.get(new URI(t.properties().get("location")));
  }

  // ================================================================ namespaces

  @Test
  void createdNamespaceIsListedAtTheTop() {
    String ns = newNamespace();
    List<String> names = sql("SHOW NAMESPACES IN " + catalog()).stream()
        .map(r -> r.getString(0)).toList();
    assertTrue(names.contains(nsOf(ns)[0]), names.toString());
  }

  @Test
  void namespacesNestToAnyDepth() throws Exception {
    String ns = newNamespace();
    sql("CREATE NAMESPACE " + ns + ".b");
    sql("CREATE NAMESPACE " + ns + ".b.c");
    sql("CREATE NAMESPACE " + ns + ".b.c.d");
    List<String> under = sql("SHOW NAMESPACES IN " + ns + ".b.c").stream()
        .map(r -> r.getString(0)).toList();
    assertEquals(List.of(nsOf(ns)[0] + ".b.c.d"), under);
    assertTrue(cat().namespaceExists(new String[] {nsOf(ns)[0], "b", "c", "d"}));
    sql("CREATE TABLE " + ns + ".b.c.d.deep (x INT)");
    sql("INSERT INTO " + ns + ".b.c.d.deep VALUES (7)");
    assertEquals(7, sql("SELECT x FROM " + ns + ".b.c.d.deep").get(0).getInt(0));
  }

  @Test
  void listingFollowsEveryPageOfNamespaces() throws Exception {
    assumeTrue(pagesLists(), "the server answers every list in one page");
    String ns = newNamespace();
    int n = SharedSpark.PAGE_SIZE * 3 + 2;
    for (int i = 0; i < n; i++) {
      cat().createNamespace(new String[] {nsOf(ns)[0], "c" + i}, Map.of());
    }
    assertEquals(n, cat().listNamespaces(nsOf(ns)).length);
  }

  @Test
  void namespaceCommentAndPropertiesAreDescribed() {
    String ns = catalog() + "." + freshName();
    sql("CREATE NAMESPACE " + ns + " COMMENT 'sales data' WITH DBPROPERTIES ('team'='blue')");
    String desc = sql("DESCRIBE NAMESPACE EXTENDED " + ns).stream()
        .map(r -> r.getString(0) + "=" + r.getString(1)).collect(Collectors.joining("\n"));
    assertTrue(desc.contains("Comment=sales data"), desc);
    assertTrue(desc.contains("team"), desc);
    assertTrue(desc.contains("blue"), desc);
  }

  @Test
  void creatingAnExistingNamespaceFails() {
    String ns = newNamespace();
    assertThrows(NamespaceAlreadyExistsException.class,
        () -> cat().createNamespace(nsOf(ns), Map.of()));
    AnalysisException e = assertThrows(AnalysisException.class,
        () -> sql("CREATE NAMESPACE " + ns));
    assertTrue(e.getMessage().contains("already exists"), e.getMessage());
    sql("CREATE NAMESPACE IF NOT EXISTS " + ns);
  }

  @Test
  void creatingANamespaceUnderAMissingParentFailsClearly() {
    String ns = catalog() + "." + freshName();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> sql("CREATE NAMESPACE " + ns + ".child"));
    assertTrue(e.getMessage().contains("Create the parent namespace first"), e.getMessage());
  }

  @Test
  void missingNamespaceIsSparksNoSuchNamespace() {
    String[] missing = {freshName()};
    assertThrows(NoSuchNamespaceException.class, () -> cat().loadNamespaceMetadata(missing));
    assertThrows(NoSuchNamespaceException.class, () -> cat().listNamespaces(missing));
    assertThrows(NoSuchNamespaceException.class, () -> cat().listTables(missing));
    assertFalse(cat().namespaceExists(missing));
    AnalysisException e = assertThrows(AnalysisException.class,
        () -> sql("DESCRIBE NAMESPACE " + catalog() + "." + missing[0]));
    assertEquals("SCHEMA_NOT_FOUND", e.getErrorClass());
  }

  @Test
  void emptyNamespaceIsDropped() {
    String ns = newNamespace();
    sql("DROP NAMESPACE " + ns);
    assertFalse(cat().namespaceExists(nsOf(ns)));
    sql("DROP NAMESPACE IF EXISTS " + ns);
    AnalysisException e = assertThrows(AnalysisException.class,
        () -> sql("DROP NAMESPACE " + ns));
    assertEquals("SCHEMA_NOT_FOUND", e.getErrorClass());
  }

  @Test
  void restrictDropOfNonEmptyNamespaceFails() {
    String t = readOnlyTable();
    String ns = t.substring(0, t.lastIndexOf('.'));
    assertThrows(NonEmptyNamespaceException.class, () -> cat().dropNamespace(nsOf(ns), false));
    AnalysisException e = assertThrows(AnalysisException.class,
        () -> sql("DROP NAMESPACE " + ns + " RESTRICT"));
    assertEquals("SCHEMA_NOT_EMPTY", e.getErrorClass());
    assertEquals(List.of(1L, 2L, 3L), ids(t));
  }

  @Test
  void cascadeDropRemovesTablesAndChildNamespaces() throws Exception {
    String t = newTable();
    String ns = t.substring(0, t.lastIndexOf('.'));
    sql("CREATE NAMESPACE " + ns + ".child");
    sql("CREATE TABLE " + ns + ".child.t2 (x INT)");
    Path data = location(t);
    sql("DROP NAMESPACE " + ns + " CASCADE");
    assertFalse(cat().namespaceExists(nsOf(ns)));
    assertFalse(Files.exists(data), "CASCADE purges table data");
  }

  @Test
  void alterNamespacePropertiesIsRefusedInPlainWords() {
    String ns = newNamespace();
    UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
        () -> sql("ALTER NAMESPACE " + ns + " SET DBPROPERTIES ('a'='b')"));
    assertTrue(e.getMessage().contains("not supported by the REST namespace spec"),
        e.getMessage());
  }

  @Test
  void useNamespaceResolvesUnqualifiedNames() {
    serverIndependent();
    String ns = newNamespace();
    try {
      sql("USE " + ns);
      sql("CREATE TABLE used (x INT)");
      sql("INSERT INTO used VALUES (5)");
      assertEquals(5, sql("SELECT x FROM used").get(0).getInt(0));
      assertEquals(1, sql("SHOW TABLES").size());
    } finally {
      sql("USE spark_catalog.default");
    }
  }

  // ================================================================ tables: listing, existence

  @Test
  void showTablesFollowsEveryPage() {
    assumeTrue(pagesLists(), "the server answers every list in one page");
    String ns = newNamespace();
    List<String> id = new ArrayList<>(List.of(nsOf(ns)));
    for (int i = 0; i < 103; i++) {
      List<String> t = new ArrayList<>(id);
      t.add(String.format("t%03d", i));
      rest.declareTable(new DeclareTableRequest().id(t));
    }
    List<Row> rows = sql("SHOW TABLES IN " + ns);
    assertEquals(103, rows.size());
    assertEquals(103, rows.stream().map(r -> r.getString(1)).distinct().count());
  }

  @Test
  void tableExistsIsFalseOnlyForMissingTables() {
    String t = readOnlyTable();
    assertTrue(cat().tableExists(ident(t)));
    assertFalse(cat().tableExists(Identifier.of(ident(t).namespace(), "nope")));
    assertFalse(cat().tableExists(Identifier.of(new String[] {freshName()}, "nope")));
  }

  @Test
  void missingTableIsSparksNoSuchTable() {
    String ns = newNamespace();
    assertThrows(NoSuchTableException.class,
        () -> cat().loadTable(Identifier.of(nsOf(ns), "nope")));
    AnalysisException e = assertThrows(AnalysisException.class,
        () -> sql("SELECT * FROM " + ns + ".nope"));
    assertEquals("TABLE_OR_VIEW_NOT_FOUND", e.getErrorClass());
  }

  // ================================================================ create, write, DML

  @Test
  void createTableWithCommentAndPropertiesIsDescribed() {
    String ns = newNamespace();
    sql("CREATE TABLE " + ns + ".t (id BIGINT) COMMENT 'the ids' TBLPROPERTIES ('k1'='v1')");
    String desc = describeExtended(ns + ".t");
    assertTrue(desc.contains("Comment=the ids"), desc);
    assertTrue(desc.contains("Location=file:"), desc);
    assertTrue(desc.contains("current-version=1"), desc);
    assertTrue(desc.contains("k1=v1"), desc);
    assertEquals("v1", tblProperties(ns + ".t").get("k1"));
  }

  @Test
  void newTablesHaveStableRowIds() {
    serverIndependent();
    String t = newTable();
    sql("UPDATE " + t + " SET name = 'z' WHERE id = 2");
    List<Row> rows = sql("SELECT id, _rowid FROM " + t + " ORDER BY _rowid");
    // Stable row ids count from 0 in insertion order; the updated row gets a new one.
    assertEquals(List.of(0L, 2L, 3L), rows.stream().map(r -> r.getLong(1)).toList());
  }

  @Test
  void creatingAnExistingTableFails() {
    String t = readOnlyTable();
    assertThrows(TableAlreadyExistsException.class, () -> sql("CREATE TABLE " + t + " (x INT)"));
    sql("CREATE TABLE IF NOT EXISTS " + t + " (x INT)");
    assertEquals(List.of(1L, 2L, 3L), ids(t));
  }

  @Test
  void creatingATableInAMissingNamespaceFails() {
    String t = catalog() + "." + freshName() + ".t";
    assertThrows(NoSuchNamespaceException.class, () -> sql("CREATE TABLE " + t + " (x INT)"));
    assertFalse(cat().tableExists(ident(t)));
  }

  @Test
  void partitionedTablesAreRefused() {
    serverIndependent();
    String ns = newNamespace();
    UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
        () -> sql("CREATE TABLE " + ns + ".p (x INT, y INT) PARTITIONED BY (y)"));
    assertTrue(e.getMessage().contains("not partitioned"), e.getMessage());
  }

  @Test
  void insertOverwriteReplacesRows() {
    serverIndependent();
    String t = newTable();
    sql("INSERT INTO " + t + " VALUES (4, 'd')");
    assertEquals(List.of(1L, 2L, 3L, 4L), ids(t));
    sql("INSERT OVERWRITE " + t + " VALUES (9, 'z')");
    assertEquals(List.of(9L), ids(t));
  }

  @Test
  void deleteUpdateAndMergeWork() {
    serverIndependent();
    String t = newTable();
    sql("DELETE FROM " + t + " WHERE id = 1");
    sql("UPDATE " + t + " SET name = 'B' WHERE id = 2");
    spark.createDataFrame(List.of(Row.fromTuple(new scala.Tuple2<>(3L, "C")),
            Row.fromTuple(new scala.Tuple2<>(4L, "d"))),
        spark.table(t).schema()).createOrReplaceTempView("src_" + catalog());
    sql("MERGE INTO " + t + " t USING src_" + catalog() + " s ON t.id = s.id "
        + "WHEN MATCHED THEN UPDATE SET name = s.name WHEN NOT MATCHED THEN INSERT *");
    List<Row> rows = sql("SELECT id, name FROM " + t + " ORDER BY id");
    assertEquals("[[2,B], [3,C], [4,d]]", rows.toString());
  }

  @Test
  void ctasCreatesTheTableWithItsRows() {
    String ns = newNamespace();
    sql("CREATE TABLE " + ns + ".c TBLPROPERTIES ('p'='q') AS SELECT id FROM range(5)");
    assertEquals(List.of(0L, 1L, 2L, 3L, 4L), ids(ns + ".c"));
    assertEquals("q", tblProperties(ns + ".c").get("p"));
  }

  @Test
  void failedCtasLeavesNoTableRegisteredOrOnDisk() throws Exception {
    String ns = newNamespace();
    String t = ns + ".broken";
    assertThrows(Exception.class, () -> sql("CREATE TABLE " + t + " AS SELECT id, "
        + "CASE WHEN id = 3 THEN raise_error('boom') ELSE id END AS v FROM range(5)"));
    assertFalse(cat().tableExists(ident(t)));
    assertEquals(0, sql("SHOW TABLES IN " + ns).size());
    try (var files = Files.list(shared.server.rootDir())) {
      String suffix = nsOf(ns)[0] + "$broken";
      assertTrue(files.noneMatch(p -> p.getFileName().toString().endsWith(suffix)),
          "no directory of the failed table remains");
    }
  }

  @Test
  void ctasOntoAnExistingTableFailsAndKeepsIt() {
    String t = readOnlyTable();
    assertThrows(TableAlreadyExistsException.class,
        () -> sql("CREATE TABLE " + t + " AS SELECT 1L AS id, 'x' AS name"));
    assertEquals(List.of(1L, 2L, 3L), ids(t));
  }

  @Test
  void rtasReplacesRowsSchemaAndProperties() {
    String t = newNamespace() + ".r";
    sql("CREATE TABLE " + t + " COMMENT 'old comment' TBLPROPERTIES ('a'='1', 'b'='2') "
        + "AS SELECT id, 'x' AS name FROM range(3)");
    sql("REPLACE TABLE " + t + " TBLPROPERTIES ('b'='3', 'c'='4') "
        + "AS SELECT id * 10 AS id, 'n' AS other FROM range(2)");
    assertEquals(List.of(0L, 10L), ids(t));
    assertEquals(List.of("id", "other"), Arrays.asList(spark.table(t).columns()));
    // The statement's properties replace the old ones; nothing of the old table is merged in.
    Map<String, String> props = tblProperties(t);
    assertFalse(props.containsKey("a"), props.toString());
    assertEquals("3", props.get("b"));
    assertEquals("4", props.get("c"));
    assertFalse(describeExtended(t).contains("old comment"), describeExtended(t));
  }

  @Test
  void failedRtasKeepsTheOriginalTable() {
    serverIndependent();
    String t = readOnlyTable();
    assertThrows(Exception.class, () -> sql("REPLACE TABLE " + t + " AS SELECT id, "
        + "CASE WHEN id = 1 THEN raise_error('boom') ELSE 'x' END AS name FROM range(3)"));
    assertEquals(List.of(1L, 2L, 3L), ids(t));
  }

  @Test
  void createOrReplaceCreatesMissingTables() {
    serverIndependent();
    String ns = newNamespace();
    sql("CREATE OR REPLACE TABLE " + ns + ".cr AS SELECT 1L AS id");
    sql("CREATE OR REPLACE TABLE " + ns + ".cr AS SELECT 2L AS id");
    assertEquals(List.of(2L), ids(ns + ".cr"));
  }

  @Test
  void dataFrameWriterV2CreatesAppendsOverwritesAndReplaces() throws Exception {
    serverIndependent();
    String t = newNamespace() + ".df";
    Dataset<Row> three = spark.range(3).toDF("id");
    three.writeTo(t).create();
    three.writeTo(t).append();
    assertEquals(6, ids(t).size());
    spark.range(10, 12).toDF("id").writeTo(t).overwrite(functions.lit(true));
    assertEquals(List.of(10L, 11L), ids(t));
    spark.range(1).toDF("id").writeTo(t).createOrReplace();
    assertEquals(List.of(0L), ids(t));
  }

  // ================================================================ drop, purge, rename

  @Test
  void dropTableForgetsItButKeepsTheData() throws Exception {
    String t = newTable();
    Path data = location(t);
    sql("DROP TABLE " + t);
    assertFalse(cat().tableExists(ident(t)));
    assertTrue(Files.exists(data), "DROP TABLE keeps data: " + data);
    sql("DROP TABLE IF EXISTS " + t);
    AnalysisException e = assertThrows(AnalysisException.class, () -> sql("DROP TABLE " + t));
    assertEquals("TABLE_OR_VIEW_NOT_FOUND", e.getErrorClass());
  }

  @Test
  void dropTablePurgeDeletesTheData() throws Exception {
    String t = newTable();
    Path data = location(t);
    sql("DROP TABLE " + t + " PURGE");
    assertFalse(cat().tableExists(ident(t)));
    assertFalse(Files.exists(data), "PURGE deletes data: " + data);
  }

  @Test
  void renameTableKeepsRows() {
    String t = newTable();
    String ns = t.substring(0, t.lastIndexOf('.'));
    if (!supportsRename()) {
      UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
          () -> sql("ALTER TABLE " + t + " RENAME TO " + nsOf(ns)[0] + ".t2"));
      assertTrue(e.getMessage().contains("does not support renaming tables"), e.getMessage());
      assertFalse(e.getMessage().contains("HTTP"), e.getMessage());
      assertEquals(List.of(1L, 2L, 3L), ids(t));
      return;
    }
    sql("ALTER TABLE " + t + " RENAME TO " + nsOf(ns)[0] + ".t2");
    assertFalse(cat().tableExists(ident(t)));
    assertEquals(List.of(1L, 2L, 3L), ids(ns + ".t2"));
    // Spark passes a bare new name with an empty namespace; the table stays where it is.
    sql("ALTER TABLE " + ns + ".t2 RENAME TO t3");
    assertEquals(List.of(1L, 2L, 3L), ids(ns + ".t3"));
    assertFalse(cat().tableExists(ident(ns + ".t2")));
  }

  @Test
  void renameMovesTablesAcrossNamespaces() {
    if (!supportsRename()) {
      return; // covered by renameTableKeepsRows
    }
    String t = newTable();
    String other = newNamespace();
    sql("ALTER TABLE " + t + " RENAME TO " + nsOf(other)[0] + ".moved");
    assertEquals(List.of(1L, 2L, 3L), ids(other + ".moved"));
    assertFalse(cat().tableExists(ident(t)));
  }

  @Test
  void renameOntoAnExistingTableFails() {
    if (!supportsRename()) {
      return;
    }
    String t = newTable();
    String ns = t.substring(0, t.lastIndexOf('.'));
    sql("CREATE TABLE " + ns + ".taken (x INT)");
    assertThrows(TableAlreadyExistsException.class,
        () -> cat().renameTable(ident(t), ident(ns + ".taken")));
    assertEquals(List.of(1L, 2L, 3L), ids(t));
  }

  // ================================================================ properties and columns

  @Test
  void tablePropertiesAreSetUnsetAndSurviveANewSession() {
    String t = newTable();
    sql("ALTER TABLE " + t + " SET TBLPROPERTIES ('owner_team'='blue', 'tier'='gold')");
    sql("ALTER TABLE " + t + " UNSET TBLPROPERTIES ('tier')");
    Map<String, String> props = tblProperties(t);
    assertEquals("blue", props.get("owner_team"));
    assertFalse(props.containsKey("tier"));
    SparkSession fresh = spark.newSession();
    // A new session starts from the SparkContext's conf. When another suite created the context
    // first, the catalogs were set on this session only, so carry them over as a user would.
    spark.conf().getAll().foreach(kv -> {
      if (kv._1().startsWith("spark.sql.catalog.")) {
        fresh.conf().set(kv._1(), kv._2());
      }
      return null;
    });
    Map<String, String> again = fresh.sql("SHOW TBLPROPERTIES " + t).collectAsList().stream()
        .collect(Collectors.toMap(r -> r.getString(0), r -> r.getString(1)));
    assertEquals("blue", again.get("owner_team"));
    assertTrue(describeExtended(t).contains("owner_team=blue"));
    // Where they live: with the server when it keeps properties, else in the dataset config.
    List<String> id = List.of(nsOf(t));
    Map<String, String> serverSide = cat().client()
        .describeTable(new io.lancerest.client.model.DescribeTableRequest().id(id)).getProperties();
    if (serverKeepsProperties()) {
      assertEquals("blue", serverSide.get("owner_team"));
      assertFalse(serverSide.containsKey("tier"));
    } else {
      assertNull(serverSide);
    }
  }

  @Test
  void reservedPropertiesCannotBeSet() {
    serverIndependent();
    String t = readOnlyTable();
    // Spark reports an IllegalArgumentException from alterTable as "Unsupported table change".
    SparkException e = assertThrows(SparkException.class,
        () -> sql("ALTER TABLE " + t + " SET TBLPROPERTIES ('current-version'='99')"));
    assertTrue(e.getMessage().contains("Table property 'current-version' of "), e.getMessage());
    assertTrue(e.getMessage().contains("is reserved"), e.getMessage());
    SparkException e2 = assertThrows(SparkException.class,
        () -> sql("ALTER TABLE " + t + " SET TBLPROPERTIES ('enable_stable_row_ids'='false')"));
    assertTrue(e2.getMessage().contains("fixed when the table is created"), e2.getMessage());
  }

  @Test
  void tableCommentCanBeChanged() {
    String t = newTable();
    sql("COMMENT ON TABLE " + t + " IS 'renamed comment'");
    String desc = describeExtended(t);
    assertTrue(desc.contains("Comment=renamed comment"), desc);
    // Shown once, as Spark's comment: never under the key it is stored with, nor as a property.
    assertFalse(desc.contains("lance-rest.comment"), desc);
    assertFalse(tblProperties(t).keySet().stream().anyMatch(k -> k.contains("comment")),
        tblProperties(t).toString());
    SparkException e = assertThrows(SparkException.class,
        () -> sql("ALTER TABLE " + t + " SET TBLPROPERTIES ('lance-rest.comment'='x')"));
    assertTrue(e.getMessage().contains("is reserved"), e.getMessage());
    sql("COMMENT ON TABLE " + t + " IS NULL");
    assertFalse(describeExtended(t).contains("Comment="), describeExtended(t));
  }

  @Test
  void addColumnsLeavesExistingRowsNull() {
    serverIndependent();
    String t = newTable();
    sql("ALTER TABLE " + t + " ADD COLUMNS (score DOUBLE)");
    sql("INSERT INTO " + t + " VALUES (4, 'd', 1.5)");
    List<Row> rows = sql("SELECT id, score FROM " + t + " ORDER BY id");
    assertTrue(rows.get(0).isNullAt(1));
    assertEquals(1.5, rows.get(3).getDouble(1));
  }

  @Test
  void dropAndRenameColumn() {
    serverIndependent();
    String t = newTable();
    sql("ALTER TABLE " + t + " RENAME COLUMN name TO label");
    assertEquals("a", sql("SELECT label FROM " + t + " WHERE id = 1").get(0).getString(0));
    sql("ALTER TABLE " + t + " DROP COLUMN label");
    assertEquals(List.of("id"), Arrays.asList(spark.table(t).columns()));
  }

  @Test
  void columnTypeWidensAndNotNullIsDropped() {
    serverIndependent();
    String ns = newNamespace();
    sql("CREATE TABLE " + ns + ".w (id INT NOT NULL, v INT)");
    sql("INSERT INTO " + ns + ".w VALUES (1, 2)");
    sql("ALTER TABLE " + ns + ".w ALTER COLUMN v TYPE BIGINT");
    sql("ALTER TABLE " + ns + ".w ALTER COLUMN id DROP NOT NULL");
    var schema = spark.table(ns + ".w").schema();
    assertEquals("bigint", schema.apply("v").dataType().simpleString());
    assertTrue(schema.apply("id").nullable());
    assertEquals(2L, sql("SELECT v FROM " + ns + ".w").get(0).getLong(0));
  }

  // ================================================================ time travel

  @Test
  void versionAsOfReadsOldVersions() {
    serverIndependent();
    String t = newTable(); // v1 create, v2 insert
    sql("INSERT INTO " + t + " VALUES (4, 'd')"); // v3
    assertEquals(List.of(1L, 2L, 3L), ids(t + " VERSION AS OF 2"));
    assertEquals(0, sql("SELECT * FROM " + t + " VERSION AS OF 1").size());
    assertEquals(4, ids(t).size());
  }

  @Test
  void versionAsOfTagReadsTheTaggedVersion() throws Exception {
    serverIndependent();
    String t = newTable();
    sql("INSERT INTO " + t + " VALUES (4, 'd')");
    try (org.lance.Dataset ds = org.lance.Dataset.open(location(t).toUri().toString())) {
      ds.tags().create("before_four", 2);
    }
    assertEquals(List.of(1L, 2L, 3L), ids(t + " VERSION AS OF 'before_four'"));
  }

  @Test
  void timestampAsOfReadsTheVersionOfThatTime() throws Exception {
    serverIndependent();
    String t = newTable();
    // Microsecond precision: short pauses keep the instant strictly between the two commits.
    Thread.sleep(50);
    String ts = sql("SELECT CAST(current_timestamp() AS STRING)").get(0).getString(0);
    Thread.sleep(50);
    sql("INSERT INTO " + t + " VALUES (4, 'd')");
    assertEquals(List.of(1L, 2L, 3L), ids(t + " TIMESTAMP AS OF '" + ts + "'"));
    // The DataFrame form (read option), same syntax and session time zone.
    assertEquals(List.of(1L, 2L, 3L), idsWith(t, "timestampAsOf", ts));
  }

  @Test
  void unknownVersionOrTagIsAClearError() {
    serverIndependent();
    String t = readOnlyTable();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> sql("SELECT * FROM " + t + " VERSION AS OF 42"));
    assertTrue(e.getMessage().contains("has no version 42"), e.getMessage());
    IllegalArgumentException e2 = assertThrows(IllegalArgumentException.class,
        () -> sql("SELECT * FROM " + t + " VERSION AS OF 'nightly'"));
    assertTrue(e2.getMessage().contains("has no tag 'nightly'"), e2.getMessage());
  }

  // ---------------------------------------------------------------- time travel by read options

  private List<Long> idsWith(String table, String... keyValues) {
    var reader = spark.read();
    for (int i = 0; i < keyValues.length; i += 2) {
      reader = reader.option(keyValues[i], keyValues[i + 1]);
    }
    return reader.table(table).orderBy("id").collectAsList().stream().map(r -> r.getLong(0))
        .collect(Collectors.toList());
  }

  @Test
  void readOptionsVersionAsOfAndVersionReadThatVersion() throws Exception {
    serverIndependent();
    String t = newTable(); // v1 create, v2 insert
    sql("INSERT INTO " + t + " VALUES (4, 'd')"); // v3
    try (org.lance.Dataset ds = org.lance.Dataset.open(location(t).toUri().toString())) {
      ds.tags().create("three_rows", 2);
    }
    assertEquals(List.of(1L, 2L, 3L), idsWith(t, "versionAsOf", "2"));
    assertEquals(List.of(1L, 2L, 3L), idsWith(t, "VERSIONASOF", "three_rows"));
    assertEquals(List.of(1L, 2L, 3L), idsWith(t, "version", "2")); // lance-spark's own name
    assertEquals(List.of(), idsWith(t, "versionAsOf", "1"));
    // The manifest-answered count and other read options keep the version.
    assertEquals(3L, spark.read().option("versionAsOf", 2).table(t).count());
    assertEquals(List.of(1L, 2L, 3L), idsWith(t, "versionAsOf", "2", "batch_size", "1"));
    assertEquals(4, ids(t).size(), "the latest is still read without options");
    assertEquals(List.of(1L, 2L, 3L, 4L), idsWith(t, "batch_size", "1"));
  }

  @Test
  void conflictingTimeTravelReadOptionsAreRefused() {
    serverIndependent();
    String t = readOnlyTable();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> idsWith(t, "versionAsOf", "1", "timestampAsOf", "2026-01-01 00:00:00"));
    assertEquals("Cannot read table " + t + " with the read options versionAsOf=1 and"
        + " timestampAsOf=2026-01-01 00:00:00: they ask for different points in time. Give only"
        + " one of versionAsOf, timestampAsOf or version.", e.getMessage());
    IllegalArgumentException e2 = assertThrows(IllegalArgumentException.class,
        () -> idsWith(t, "versionAsOf", "1", "version", "2"));
    assertTrue(e2.getMessage().contains("versionAsOf=1 and version=2"), e2.getMessage());
  }

  /** The row count a scan of {@code table} answers from the manifest. */
  private static long manifestCount(Table table, Map<String, String> options) {
    var builder = (org.apache.spark.sql.connector.read.SupportsPushDownAggregates)
        ((org.apache.spark.sql.connector.catalog.SupportsRead) table)
            .newScanBuilder(new org.apache.spark.sql.util.CaseInsensitiveStringMap(options));
    var countStar = new org.apache.spark.sql.connector.expressions.aggregate.Aggregation(
        new org.apache.spark.sql.connector.expressions.aggregate.AggregateFunc[] {
            new org.apache.spark.sql.connector.expressions.aggregate.CountStar()},
        new org.apache.spark.sql.connector.expressions.Expression[0]);
    assertTrue(builder.pushAggregation(countStar));
    var scan = (org.apache.spark.sql.connector.read.LocalScan) builder.build();
    return scan.rows()[0].getLong(0);
  }

  @Test
  void aReadOptionOnATableReadWithSqlTimeTravelIsRefused() throws Exception {
    serverIndependent();
    String t = readOnlyTable(); // version 1 empty, version 2 three rows
    // Spark 3.5's SQL has no per-table options, so this is the catalog API a future Spark (or
    // another engine) would use: a table loaded for VERSION AS OF 1, then scanned with options.
    Table atOne = cat().loadTable(ident(t), "1");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> manifestCount(atOne, Map.of("versionAsOf", "2")));
    assertEquals("Cannot read table " + t + " with the read option versionAsOf=2: the query"
        + " already reads it at version 1 (VERSION AS OF / TIMESTAMP AS OF). Use either the SQL"
        + " clause or the option, not both.", e.getMessage());
    // Other options keep the SQL version (lance-spark alone would fall back to the latest).
    assertEquals(0L, manifestCount(atOne, Map.of("batch_size", "1")));
    assertEquals(0L, manifestCount(atOne, Map.of()));
    assertEquals(3L, manifestCount(cat().loadTable(ident(t)), Map.of("batch_size", "1")));
  }

  @Test
  void aReadOptionForAMissingVersionNamesTheLatest() {
    serverIndependent();
    String t = readOnlyTable(); // versions 1..2
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> idsWith(t, "versionAsOf", "42"));
    assertEquals("Table " + t.substring(catalog().length() + 1) + " has no version 42. Its latest"
        + " version is 2; available versions: 1..2 (older ones may have been cleaned up).",
        e.getMessage());
    IllegalArgumentException e2 = assertThrows(IllegalArgumentException.class,
        () -> idsWith(t, "version", "two"));
    assertTrue(e2.getMessage().contains("read option version must be a version number, got"
        + " 'two'"), e2.getMessage());
    IllegalArgumentException e3 = assertThrows(IllegalArgumentException.class,
        () -> idsWith(t, "timestampAsOf", "yesterday-ish"));
    assertTrue(e3.getMessage().startsWith("Cannot read table " + t + ": read option timestampAsOf"
        + " 'yesterday-ish' is not a timestamp"), e3.getMessage());
  }

  @Test
  void aReadOptionForAVersionWithOtherColumnsPointsToSql() {
    serverIndependent();
    String t = newTable(); // v2: (id, name)
    sql("ALTER TABLE " + t + " ADD COLUMNS (extra INT)");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> idsWith(t, "versionAsOf", "2"));
    assertTrue(e.getMessage().contains("the columns then were struct<id:bigint,name:string> but"
        + " Spark already resolved the query with the current"
        + " struct<id:bigint,name:string,extra:int>. Use SQL instead"), e.getMessage());
    assertEquals(List.of(1L, 2L, 3L), ids(t + " VERSION AS OF 2"));
  }

  // ================================================================ names

  @Test
  void namesWithSpacesDotsAndUnicodeWork() {
    serverIndependent();
    String ns = catalog() + ".`" + freshName() + " sp.ace ü`";
    sql("CREATE NAMESPACE " + ns);
    for (String name : List.of("`my table`", "`a.b`", "`tåble_ü`")) {
      sql("CREATE TABLE " + ns + "." + name + " (x INT)");
      sql("INSERT INTO " + ns + "." + name + " VALUES (1)");
      assertEquals(1, sql("SELECT x FROM " + ns + "." + name).get(0).getInt(0));
    }
    assertEquals(3, sql("SHOW TABLES IN " + ns).size());
  }

  @Test
  void namesContainingTheDelimiterAreRefusedClearly() {
    serverIndependent();
    String ns = newNamespace();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> sql("CREATE TABLE " + ns + ".`a$b` (x INT)"));
    assertTrue(e.getMessage().contains("contains the namespace delimiter '$'"), e.getMessage());
  }

  // ================================================================ cache

  @Test
  void ddlInvalidatesTheCachedTable() {
    serverIndependent();
    String t = newTable();
    assertEquals(2, spark.table(t).columns().length);
    sql("ALTER TABLE " + t + " ADD COLUMNS (extra INT)");
    assertEquals(3, spark.table(t).columns().length);
  }

  @Test
  void dataWrittenThroughTheCachedTableIsVisible() {
    serverIndependent();
    String t = newTable();
    ids(t);
    sql("INSERT INTO " + t + " VALUES (4, 'd')");
    assertEquals(4, ids(t).size());
    assertEquals("3", tblProperties(t).get("current-version"));
  }

  // ================================================================ functions

  @Test
  void servesLanceSparksFragmentFunction() throws Exception {
    serverIndependent();
    assertEquals("lance_fragment_or_rand", cat().listFunctions(new String[0])[0].name());
    assertEquals("lance_fragment_or_rand",
        cat().loadFunction(Identifier.of(new String[0], "lance_fragment_or_rand")).name());
    assertArrayEquals(new Identifier[0], cat().listFunctions(new String[] {"x"}));
  }
}
