package io.lancerest.spark.mv.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.definition.MaterializedViewKind;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.parser.CatalystSqlParser$;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.junit.jupiter.api.Test;

/** The statement grammar, with Spark's own parser as the delegate (no session needed). */
class MvStatementParserTest {
  private static final ParserInterface SPARK = CatalystSqlParser$.MODULE$;

  private static MvStatement parse(String sql) throws ParseException {
    return MvStatementParser.parse(SPARK, sql);
  }

  private static MaterializedViewSqlException error(String sql) {
    return assertThrows(MaterializedViewSqlException.class, () -> parse(sql));
  }

  private static Map<String, String> map(String... kv) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  @Test
  void createQueryViewMinimal() throws Exception {
    assertEquals(new MvStatement.Create(List.of("lance", "ns", "v"), false, null, null, null,
            null, Map.of(), Map.of(), "SELECT id, upper(title) AS t FROM lance.ns.src", true),
        parse("CREATE MATERIALIZED VIEW lance.ns.v AS SELECT id, upper(title) AS t "
            + "FROM lance.ns.src"));
  }

  @Test
  void createWithEveryClauseInAnyOrderAndWithNoData() throws Exception {
    MvStatement.Create c = (MvStatement.Create) parse("""
        create materialized view if not exists `my cat`.ns.`v.1`
          -- a chunker over documents
          TBLPROPERTIES ('owner' = 'me')
          USING CHUNKER 'com.example.Split'
          OPTIONS (input_columns = 'text', num_cpus = 1.5, batch = TRUE, memory = 3221225472,
                   error_handling.max_skip_count 10, "quoted key" = 'it''s')
          AS SELECT id, text FROM lance.ns.docs WHERE lang = 'en'
          WITH NO DATA;""");
    assertEquals(List.of("my cat", "ns", "v.1"), c.name());
    assertTrue(c.ifNotExists());
    assertEquals(MaterializedViewKind.CHUNKER, c.kind());
    assertEquals("com.example.Split", c.functionClass());
    assertEquals(map("input_columns", "text", "num_cpus", "1.5", "batch", "true",
        "memory", "3221225472", "error_handling.max_skip_count", "10", "quoted key", "it's"),
        c.options());
    assertEquals(Map.of("owner", "me"), c.tableProperties());
    assertEquals("SELECT id, text FROM lance.ns.docs WHERE lang = 'en'", c.query());
    assertFalse(c.withData());
  }

  @Test
  void createUdtfWithPartitionByAndPartitionByIndexed() throws Exception {
    MvStatement.Create a = (MvStatement.Create) parse("CREATE MATERIALIZED VIEW v USING UDTF "
        + "'com.example.TopK' PARTITION BY category AS SELECT * FROM src WITH DATA");
    assertEquals(MaterializedViewKind.UDTF, a.kind());
    assertEquals("category", a.partitionBy());
    assertEquals(null, a.partitionByIndexed());
    assertTrue(a.withData());
    MvStatement.Create b = (MvStatement.Create) parse("CREATE MATERIALIZED VIEW v USING UDTF "
        + "'com.example.Cluster' PARTITION BY INDEXED embedding AS SELECT * FROM src");
    assertEquals("embedding", b.partitionByIndexed());
    assertEquals(MaterializedViewKind.CHUNKER, ((MvStatement.Create) parse(
        "CREATE MATERIALIZED VIEW v USING scalar_udtf 'C' AS SELECT a FROM s")).kind());
  }

  @Test
  void jobStatements() throws Exception {
    assertTrue(MvStatementParser.handles("SHOW JOBS"));
    assertTrue(MvStatementParser.handles("desc job 'x'"));
    assertTrue(MvStatementParser.handles("CANCEL JOB 'x'"));
    assertEquals(new MvStatement.Refresh(List.of("lance", "ns", "v"), map("force", "true"),
        true), parse("REFRESH MATERIALIZED VIEW lance.ns.v ASYNC WITH (force = true)"));
    assertEquals(new MvStatement.Refresh(List.of("v"), Map.of(), true),
        parse("refresh materialized view v async;"));
    // WAIT is the option wait = true (a server-managed refresh waits for the server's job)
    assertEquals(new MvStatement.Refresh(List.of("v"), map("force", "true", "wait", "true"),
        false), parse("REFRESH MATERIALIZED VIEW v WAIT WITH (force = true)"));
    assertTrue(io.lancerest.spark.mv.RefreshOptions.fromMap(map("wait", "true")).await());
    assertEquals(new MvStatement.ShowJobs(null, null, null), parse("SHOW JOBS"));
    assertEquals(new MvStatement.ShowJobs("lance", List.of("lance", "ns", "v"), 20),
        parse("show jobs in lance for lance.ns.v limit 20;"));
    assertEquals(new MvStatement.ShowJobs(null, null, 5), parse("SHOW JOBS LIMIT 5"));
    assertEquals(new MvStatement.DescribeJob("3f2a", null, null), parse("DESCRIBE JOB '3f2a'"));
    assertEquals(new MvStatement.DescribeJob("3f2a", "lance", null),
        parse("DESC JOB '3f2a' IN lance"));
    assertEquals(new MvStatement.CancelJob("j-1", "lance", null),
        parse("CANCEL JOB 'j-1' IN lance"));
    assertEquals(new MvStatement.DescribeJob("3f2a", null, List.of("svc", "ns", "v")),
        parse("DESCRIBE JOB '3f2a' FOR svc.ns.v"));
    assertEquals(new MvStatement.CancelJob("j-1", null, List.of("ns", "v")),
        parse("CANCEL JOB 'j-1' FOR ns.v;"));
    assertEquals("Give IN <catalog> or FOR <view>, not both: the view names its catalog at "
        + "position 17:", error("CANCEL JOB 'j-1' FOR ns.v IN lance").getMessage().lines()
        .findFirst().orElseThrow());
    assertEquals("Expected the number of jobs after LIMIT (0 or more), found 'ten' at position "
        + "16:", error("SHOW JOBS LIMIT ten").getMessage().lines().findFirst().orElseThrow());
    assertEquals("Expected the job id as a string literal ('3f2a...'), found 'j1' at position "
        + "11:", error("CANCEL JOB j1").getMessage().lines().findFirst().orElseThrow());
    assertEquals("FOR is given twice at position 16:", error("SHOW JOBS FOR a FOR b")
        .getMessage().lines().findFirst().orElseThrow());
  }

  @Test
  void refreshDropShowDescribe() throws Exception {
    assertEquals(new MvStatement.Refresh(List.of("lance", "ns", "v"), Map.of()),
        parse("REFRESH MATERIALIZED VIEW lance.ns.v"));
    assertEquals(new MvStatement.Refresh(List.of("v"), map("src_version", "12",
            "concurrency", "8", "job_id", "nightly-1", "force", "true")),
        parse("refresh materialized view v with (src_version = 12, concurrency=8, "
            + "job_id = 'nightly-1', force = true);"));
    assertEquals(new MvStatement.Drop(List.of("ns", "v"), true),
        parse("DROP MATERIALIZED VIEW IF EXISTS ns.v"));
    assertEquals(new MvStatement.Drop(List.of("v"), false), parse("DROP MATERIALIZED VIEW v"));
    assertEquals(new MvStatement.Show(null), parse("SHOW MATERIALIZED VIEWS"));
    assertEquals(new MvStatement.Show(List.of("lance", "ns")),
        parse("SHOW MATERIALIZED VIEWS IN lance.ns"));
    assertEquals(new MvStatement.Show(List.of("ns")), parse("SHOW MATERIALIZED VIEWS FROM ns"));
    assertEquals(new MvStatement.Describe(List.of("lance", "ns", "v")),
        parse("DESCRIBE MATERIALIZED VIEW lance.ns.v"));
    assertEquals(new MvStatement.Describe(List.of("v")), parse("desc materialized view v"));
    assertEquals(new MvStatement.ExplainRefresh(List.of("lance", "ns", "v"), Map.of()),
        parse("EXPLAIN REFRESH MATERIALIZED VIEW lance.ns.v"));
    assertEquals(new MvStatement.ExplainRefresh(List.of("v"), map("force", "true")),
        parse("explain refresh materialized view v with (force = true);"));
  }

  @Test
  void onlyMaterializedViewStatementsAreHandled() {
    assertTrue(MvStatementParser.handles("  /* c */ REFRESH MATERIALIZED VIEW v"));
    assertTrue(MvStatementParser.handles("create materialized view v as select 1"));
    assertFalse(MvStatementParser.handles("CREATE VIEW v AS SELECT 1"));
    assertFalse(MvStatementParser.handles("SELECT 'materialized' FROM t"));
    assertFalse(MvStatementParser.handles("SHOW TABLES FROM lance.ns"));
    assertFalse(MvStatementParser.handles("SELECT 'unclosed"));
    assertFalse(MvStatementParser.handles("REFRESH TABLE t"));
    assertTrue(MvStatementParser.handles("EXPLAIN REFRESH MATERIALIZED VIEW v"));
    assertFalse(MvStatementParser.handles("EXPLAIN SELECT 1"), "Spark's own EXPLAIN");
    assertFalse(MvStatementParser.handles("EXPLAIN REFRESH TABLE t"));
    // a table named job stays Spark's; a job id is a string literal
    assertFalse(MvStatementParser.handles("DESC job"));
    assertFalse(MvStatementParser.handles("DESCRIBE job"));
    assertTrue(MvStatementParser.handles("DESCRIBE JOB 'nightly-1'"));
    assertTrue(MvStatementParser.handles("CANCEL JOB 'nightly-1'"));
  }

  @Test
  void createIndexWithAVectorMethodIsOursAndEveryOtherIsLanceSparks() throws Exception {
    assertTrue(MvStatementParser.handles("ALTER TABLE lance.ns.t CREATE INDEX i USING ivf_flat "
        + "(vec)"));
    assertTrue(MvStatementParser.handles("alter table `my ns`.t create index i using IVF_HNSW_SQ"
        + " (vec)"));
    assertTrue(MvStatementParser.handles("ALTER TABLE t CREATE INDEX i USING ivf_foo (vec)"));
    assertTrue(MvStatementParser.handles("ALTER TABLE t CREATE INDEX i USING Bitmap (cat)"));
    assertFalse(MvStatementParser.handles("ALTER TABLE t CREATE INDEX i USING btree (id)"));
    assertFalse(MvStatementParser.handles("ALTER TABLE t CREATE INDEX i USING fts (text)"));
    assertFalse(MvStatementParser.handles("ALTER TABLE t SET TBLPROPERTIES ('ivf' = 'x')"));
    assertFalse(MvStatementParser.handles("ALTER TABLE t ADD COLUMNS (ivf_flat INT)"));

    assertEquals(new MvStatement.CreateVectorIndex(List.of("lance", "my ns", "t"), "vec_idx",
            "ivf_pq", "vec", map("num_partitions", "4", "Metric", "cosine")),
        parse("ALTER TABLE lance.`my ns`.t CREATE INDEX vec_idx USING IVF_PQ (vec) WITH "
            + "(num_partitions = 4, Metric = 'cosine');"));
    assertEquals(new MvStatement.CreateVectorIndex(List.of("t"), "i", "ivf_flat", "v", Map.of()),
        parse("ALTER TABLE t CREATE INDEX i USING ivf_flat (v)"));
    assertEquals(new MvStatement.CreateVectorIndex(List.of("t"), "i", "bitmap", "cat", Map.of()),
        parse("ALTER TABLE t CREATE INDEX i USING BITMAP (cat)"));
    assertTrue(error("ALTER TABLE t CREATE INDEX i USING ivf_foo (v)").getMessage()
        .startsWith("CREATE INDEX on t: unknown index method 'ivf_foo'; use one of ivf_flat, "
            + "ivf_pq, ivf_sq, ivf_rq, ivf_hnsw_pq, ivf_hnsw_sq, bitmap (or btree, fts for "
            + "lance-spark's scalar and full-text indexes) at position 35"));
    assertTrue(error("ALTER TABLE t CREATE INDEX i USING ivf_flat (v) WITH (n = x)").getMessage()
        .startsWith("Expected a value for 'n' (a 'string', a number, true or false), found 'x' "
            + "at position 58"));
    assertTrue(error("ALTER TABLE t CREATE INDEX i USING ivf_flat (a.b)").getMessage()
        .startsWith("A vector index is built on a top-level column, not a.b at position 45"));
    assertTrue(error("ALTER TABLE t CREATE INDEX i USING bitmap (a, b)").getMessage()
        .startsWith("A bitmap index is built on one column, not 2 [a, b] at position 43"));
    assertTrue(error("ALTER TABLE t CREATE INDEX i USING ivf_flat v").getMessage()
        .startsWith("Expected '(', found 'v' at position 44"));
  }

  @Test
  void showIndexesIsOurs() throws Exception {
    assertTrue(MvStatementParser.handles("SHOW INDEXES FROM lance.ns.t"));
    assertEquals(new MvStatement.ShowIndexes(List.of("lance", "my ns", "t")),
        parse("show indexes from lance.`my ns`.t;"));
    assertEquals(new MvStatement.ShowIndexes(List.of("t")), parse("SHOW INDEX IN t"));
    assertFalse(MvStatementParser.handles("SHOW INDEXES"), "Spark's syntax error");
    assertFalse(MvStatementParser.handles("SHOW INDEXES t"), "Spark's syntax error");
    assertTrue(error("SHOW INDEXES FROM t u").getMessage()
        .startsWith("Unexpected 'u' after the end of the statement at position 20"));
  }

  @Test
  void errorsNameTheOffendingToken() {
    assertEquals("Expected CHUNKER or UDTF after USING, found 'PYTHON' at position 33:\n"
        + "CREATE MATERIALIZED VIEW v USING PYTHON 'x' AS SELECT 1\n"
        + "                                 ^",
        error("CREATE MATERIALIZED VIEW v USING PYTHON 'x' AS SELECT 1").getMessage());
    assertTrue(error("CREATE MATERIALIZED VIEW v USING CHUNKER com.x.C AS SELECT 1").getMessage()
        .startsWith("Expected the function class as a string literal "
            + "('com.example.MyChunker'), found 'com' at position 41"));
    assertTrue(error("CREATE MATERIALIZED VIEW v SELECT a FROM t").getMessage().startsWith(
        "Expected USING, PARTITION BY, OPTIONS, TBLPROPERTIES or AS, found 'SELECT' at "
            + "position 27"));
    assertTrue(error("CREATE MATERIALIZED VIEW v OPTIONS (a = 1) OPTIONS (b = 2) AS SELECT 1")
        .getMessage().startsWith("OPTIONS is given twice at position 43"));
    assertTrue(error("CREATE MATERIALIZED VIEW v PARTITION BY a PARTITION BY INDEXED b AS "
        + "SELECT 1").getMessage().startsWith("PARTITION BY is given twice at position 42"));
    assertTrue(error("CREATE MATERIALIZED VIEW v OPTIONS (a = 1, a = 2) AS SELECT 1")
        .getMessage().startsWith("OPTIONS sets 'a' twice at position 43"));
    assertTrue(error("REFRESH MATERIALIZED VIEW v WITH (concurrency = eight)").getMessage()
        .startsWith("Expected a value for 'concurrency' (a 'string', a number, true or false), "
            + "found 'eight' at position 48"));
    assertTrue(error("REFRESH MATERIALIZED VIEW v WITH (concurrency = 8").getMessage()
        .startsWith("Expected ')', found end of input at position 49"));
    assertTrue(error("DROP MATERIALIZED VIEW IF v").getMessage()
        .startsWith("Expected EXISTS, found 'v' at position 26"));
    assertTrue(error("DROP MATERIALIZED TABLE v").getMessage()
        .startsWith("Expected VIEW, found 'TABLE' at position 18"));
    assertTrue(error("SHOW MATERIALIZED VIEWS IN ns extra").getMessage()
        .startsWith("Unexpected 'extra' after the end of the statement at position 30"));
    assertTrue(error("DESCRIBE MATERIALIZED VIEW 'v'").getMessage()
        .startsWith("Expected a view name, found 'v' at position 27"));
    assertTrue(error("CREATE MATERIALIZED VIEW v AS WITH DATA").getMessage()
        .startsWith("Expected a SELECT after AS at position 27"));
    assertTrue(error("CREATE MATERIALIZED VIEW v PARTITION BY a.b AS SELECT 1").getMessage()
        .startsWith("PARTITION BY takes one top-level column of the source, not a.b"));
  }

  @Test
  void theSelectIsCheckedBySparksParser() {
    ParseException e = assertThrows(ParseException.class,
        () -> parse("CREATE MATERIALIZED VIEW v AS SELEC a FROM t"));
    assertTrue(e.getMessage().contains("SELEC"), e.getMessage());
  }
}
