package io.lancerest.spark.mv.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.SparkFixture;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The extension in a real session, next to lance-spark's, calling a recording API. */
class SqlExtensionsTest {
  private final SparkSession spark = SparkFixture.spark();

  @BeforeEach
  void clear() {
    RecordingViews.CALLS.clear();
  }

  private List<Row> sql(String s) {
    return spark.sql(s).collectAsList();
  }

  @Test
  void otherStatementsReachSparkAndLanceSparkParsers() throws Exception {
    assertEquals(List.of(RowFactory.create(1)), sql("SELECT 1 AS x"));
    LogicalPlan lanceSpark = spark.sessionState().sqlParser()
        .parsePlan("VACUUM mvtest.ns.t");
    assertEquals("Vacuum", lanceSpark.getClass().getSimpleName());
    assertInstanceOf(MaterializedViewCommand.class, spark.sessionState().sqlParser()
        .parsePlan("SHOW INDEXES FROM mvtest.ns.t"), "ours: one row per index, with segments");
    LogicalPlan ours = spark.sessionState().sqlParser()
        .parsePlan("REFRESH MATERIALIZED VIEW mvtest.ns.v");
    assertInstanceOf(MaterializedViewCommand.class, ours);
    assertEquals(List.of(), RecordingViews.CALLS, "parsing has no side effects");
  }

  @Test
  void refreshReturnsOneResultRowAndPassesOptionsToTheNamedCatalog() {
    List<Row> rows = sql("REFRESH MATERIALIZED VIEW mvtest.ns.v WITH (src_version = 12, "
        + "concurrency = 4)");
    assertEquals(List.of(RowFactory.create("job-2", "PARTIAL", "chunker", 12L, 30L, 4L, 2L,
        1500L)), rows);
    assertEquals(List.of("mvtest:refresh:[ns, v]:RefreshOptions[srcVersion=12, concurrency=4, "
        + "maxRowsPerFragment=null, intraApplierConcurrency=null, sourceTaskSize=null, "
        + "outputLimit=null, cluster=null, manifest=null, jobId=null, force=false, await=false]"),
        RecordingViews.CALLS);
    assertEquals(List.of("job_id", "status", "kind", "source_version", "rows_inserted",
        "rows_deleted", "skipped", "duration_ms"),
        List.of(spark.sql("REFRESH MATERIALIZED VIEW v").schema().fieldNames()));
  }

  @Test
  void explainRefreshReturnsThePlanAsNameValueRows() {
    List<Row> rows = sql("EXPLAIN REFRESH MATERIALIZED VIEW mvtest.ns.v WITH (force = true)");
    assertEquals(List.of("mvtest:explain:[ns, v]:RefreshOptions[srcVersion=null, concurrency="
        + "null, maxRowsPerFragment=null, intraApplierConcurrency=null, sourceTaskSize=null, "
        + "outputLimit=null, cluster=null, manifest=null, jobId=null, force=true, await=false]"),
        RecordingViews.CALLS);
    java.util.Map<String, String> info = new java.util.LinkedHashMap<>();
    rows.forEach(r -> info.put(r.getString(0), r.getString(1)));
    assertEquals("incremental", info.get("Mode"));
    assertEquals("3 -> 5", info.get("Source versions"));
    assertEquals("2 of 10 [8, 9]", info.get("Source fragments to read"));
    assertEquals("+16", info.get("Expected view row change"));
    assertEquals("on the driver, no Spark job", info.get("Write"));
    assertEquals(List.of("info_name", "info_value"), List.of(spark.sql(
        "EXPLAIN REFRESH MATERIALIZED VIEW v").schema().fieldNames()));
  }

  @Test
  void createRunsTheApiWithTheStatementAndWithNoDataReturnsNoRow() {
    assertEquals(List.of(), sql("CREATE MATERIALIZED VIEW IF NOT EXISTS mvtest.ns.chunks "
        + "USING CHUNKER 'com.example.Split' OPTIONS (size = 200) "
        + "AS SELECT id, text FROM mvtest.ns.docs WHERE lang = 'en' WITH NO DATA"));
    assertEquals(List.of("mvtest:create:CreateViewRequest[viewId=[ns, chunks], ifNotExists=true, "
        + "kind=CHUNKER, selectSql=SELECT id, text FROM mvtest.ns.docs WHERE lang = 'en', "
        + "sourceQuery=null, functionClass=com.example.Split, partitionBy=null, "
        + "partitionByIndexedColumn=null, options={size=200}, tableProperties={}, "
        + "withData=false]"), RecordingViews.CALLS);
    assertEquals(List.of(RowFactory.create("job-1", "DONE", "query", 7L, 10L, 0L, 0L, 5L)),
        sql("CREATE MATERIALIZED VIEW mvtest.ns.q AS SELECT id FROM mvtest.ns.docs"));
  }

  @Test
  void singlePartNamesResolveInTheCurrentCatalogAndNamespace() {
    assertEquals(List.of(), sql("DROP MATERIALIZED VIEW v"));
    assertEquals(List.of(), sql("DROP MATERIALIZED VIEW IF EXISTS mvtest.ns.v"));
    assertEquals(List.of("spark_catalog:drop:[default, v]:false", "mvtest:drop:[ns, v]:true"),
        RecordingViews.CALLS);
  }

  @Test
  void showListsTheViewsOfANamespace() {
    assertEquals(List.of(RowFactory.create("ns", "a"), RowFactory.create("ns", "b")),
        sql("SHOW MATERIALIZED VIEWS IN mvtest.ns"));
    sql("SHOW MATERIALIZED VIEWS");
    assertEquals(List.of("mvtest:list:[ns]", "spark_catalog:list:[default]"),
        RecordingViews.CALLS);
  }

  @Test
  void describeShowsKindSourceDefinitionWatermarkAndLastJob() {
    List<Row> rows = sql("DESCRIBE MATERIALIZED VIEW mvtest.ns.v");
    assertEquals(RowFactory.create("Kind", "query"), rows.get(1));
    assertEquals(RowFactory.create("Source", "ns.src"), rows.get(3));
    assertTrue(rows.get(4).getString(1).contains("\"filter\":\"id > 3\""), rows.toString());
    assertTrue(rows.contains(RowFactory.create("Last refreshed source version", "9")));
    assertTrue(rows.contains(RowFactory.create("Last job", "{\"job_id\":\"job-2\"}")));
    assertEquals(List.of(RowFactory.create("Indexes", "2"),
        RowFactory.create("Index vec_idx", "vector on vec: 600 rows indexed, 50 not indexed, 2 "
            + "segments"),
        RowFactory.create("Index id_idx", "btree on id: 650 rows indexed, 0 not indexed, 1 "
            + "segment")), rows.subList(rows.size() - 3, rows.size()));
    assertEquals(List.of("mvtest:describe:[ns, v]"), RecordingViews.CALLS, "one call, one "
        + "resolution of the view");
    List<Row> none = sql("DESCRIBE MATERIALIZED VIEW mvtest.ns.w");
    assertEquals(RowFactory.create("Indexes", "none"), none.get(none.size() - 1));
  }

  @Test
  void indexesThatCannotBeListedLeaveTheRestOfTheDescription() {
    List<Row> broken = sql("DESCRIBE MATERIALIZED VIEW mvtest.ns.broken");
    assertEquals(RowFactory.create("Last job", "{\"job_id\":\"job-2\"}"),
        broken.get(broken.size() - 3));
    // this test catalog has no tables: the vector columns cannot be read, the rest stands
    assertEquals(RowFactory.create("Vector columns", "unknown: the view's table cannot be read "
        + "here (AnalysisException)"), broken.get(broken.size() - 2));
    assertEquals(RowFactory.create("Indexes", "unavailable: Not found: "
        + "s3://***@b/v.lance/_indices/x; SHOW INDEXES FROM mvtest.ns.broken gives the error"),
        broken.get(broken.size() - 1));
    // a view engine (spark.lancerest.mv.factory) that does not list indexes still describes
    List<Row> other = sql("DESCRIBE MATERIALIZED VIEW mvtest.ns.other");
    assertEquals(RowFactory.create("Kind", "query"), other.get(1));
    assertEquals(RowFactory.create("Indexes", "unavailable: not supported by this view engine; "
        + "SHOW INDEXES FROM mvtest.ns.other lists them"), other.get(other.size() - 1));
  }

  @Test
  void errorsSurfaceWithTheirTypeAndMessage() {
    InvalidOptionException bad = assertThrows(InvalidOptionException.class,
        () -> sql("REFRESH MATERIALIZED VIEW mvtest.ns.v WITH (colour = 'red')"));
    assertTrue(bad.getMessage().startsWith("Unknown refresh option 'colour'; known options: "
        + "src_version, concurrency,"), bad.getMessage());
    assertThrows(MaterializedViewNotFoundException.class,
        () -> sql("REFRESH MATERIALIZED VIEW mvtest.ns.missing"));
    MaterializedViewSqlException syntax = assertThrows(MaterializedViewSqlException.class,
        () -> spark.sql("DROP MATERIALIZED VIEW IF mvtest.ns.v"));
    assertTrue(syntax.getMessage().startsWith("Expected EXISTS, found 'mvtest' at position 26"));
  }
}
