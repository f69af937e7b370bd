package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.LanceRestSparkExtensions;
import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.udtf.IvfPartitions;
import io.lancerest.spark.mv.udtf.TopKUdtf;
import io.lancerest.spark.mv.udtf.UdtfValidationException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;
import org.lance.spark.extensions.LanceSparkSessionExtensions;

/**
 * Vector indexes from SQL ({@code ALTER TABLE … CREATE INDEX … USING ivf_flat (col)}, built by
 * our extension since lance-spark 0.4.0 has none), and a {@code PARTITION BY INDEXED} UDTF view
 * made, refreshed and checked from SQL alone.
 */
class VectorIndexSqlTest {
  static EngineFixture f;
  static String ns;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of("mv.mode", "client"));
    ns = f.namespace("vix");
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  /**
   * {@code lance.<ns>.<name> (id BIGINT, vec 2-d vector, arr ARRAY<FLOAT>)} with ids {@code
   * [from, to)} in two well separated clusters: even ids near (0, 0), odd ids near (100, 100).
   */
  private static String vectors(String name, int to) {
    String t = "lance." + ns + "." + name;
    f.sql("CREATE TABLE " + t + " (id BIGINT, vec ARRAY<FLOAT>, arr ARRAY<FLOAT>) "
        + "TBLPROPERTIES ('vec.arrow.fixed-size-list.size' = '2')");
    insert(t, 0, to);
    return t;
  }

  private static void insert(String t, int from, int to) {
    f.sql("INSERT INTO " + t + " SELECT id, array(CAST((id % 2) * 100 + id * 0.01 AS FLOAT), "
        + "CAST((id % 2) * 100 AS FLOAT)), array(CAST(id AS FLOAT)) FROM range(" + from + ", "
        + to + ", 1, 1)");
  }

  private static String location(String name) {
    return CatalogBinding.of(f.spark, EngineFixture.CATALOG).locate(List.of(ns, name), "table")
        .location();
  }

  private static long currentVersion(String t) {
    return f.sql("SHOW TBLPROPERTIES " + t).stream()
        .filter(r -> r.getString(0).equals("current-version"))
        .mapToLong(r -> Long.parseLong(r.getString(1))).findFirst().orElseThrow();
  }

  /** The IVF partition (by the index's own centroids) of cluster {@code odd}'s centre. */
  private static int partitionOf(IvfPartitions.IvfIndex index, boolean odd) {
    float c = odd ? 100f : 0f;
    int best = -1;
    double bestDistance = Double.MAX_VALUE;
    for (int p = 0; p < index.centroids().size(); p++) {
      float[] x = index.centroids().get(p);
      double d = (x[0] - c) * (x[0] - c) + (x[1] - c) * (x[1] - c);
      if (d < bestDistance) {
        bestDistance = d;
        best = p;
      }
    }
    return best;
  }

  /** The view's rows as "id|partition|rank", sorted, expected from the index's centroids. */
  private static List<String> expectedTop3(String source, long[] evenIds, long[] oddIds) {
    IvfPartitions.IvfIndex index = IvfPartitions.inspect(LanceLocation.of(location(source), Map.of()), null,
        "vec");
    assertEquals(2, index.numPartitions());
    int even = partitionOf(index, false);
    int odd = partitionOf(index, true);
    assertTrue(even != odd, "the clusters are different partitions");
    List<String> out = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      out.add(evenIds[i] + "|" + even + "|" + (i + 1));
      out.add(oddIds[i] + "|" + odd + "|" + (i + 1));
    }
    out.sort(null);
    return out;
  }

  @Test
  void aPartitionByIndexedViewIsMadeAndRefreshedFromSqlAlone() {
    String src = vectors("docs", 40);
    long before = currentVersion(src);
    SparkSession.setActiveSession(f.spark);
    org.apache.spark.sql.Dataset<Row> made = f.spark.sql("ALTER TABLE " + src + " CREATE INDEX "
        + "vec_idx USING ivf_flat (vec) WITH (num_partitions = 2, metric = 'l2')");
    assertEquals(List.of("fragments_indexed", "index_name"), List.of(made.schema().fieldNames()));
    assertEquals("[[1,vec_idx]]", made.collectAsList().toString());
    // The catalog's table is reloaded: the statement after sees the index's commit.
    assertEquals(before + 1, currentVersion(src));
    assertEquals(List.of("vec_idx|WrappedArray(vec)|vector|1|40|0|0|1"),
        f.rows("SHOW INDEXES FROM " + src));

    String v = "lance." + ns + ".top3";
    f.sql("CREATE MATERIALIZED VIEW " + v + " USING UDTF '" + TopKUdtf.class.getName()
        + "' PARTITION BY INDEXED vec OPTIONS (input_columns = 'id', order_by = 'id', k = '3') "
        + "AS SELECT id, vec FROM " + src);
    // Per IVF partition (one per cluster), the three largest ids.
    assertEquals(expectedTop3("docs", new long[] {38, 36, 34}, new long[] {39, 37, 35}),
        f.rows("SELECT id, _partition_id, rank FROM " + v));

    insert(src, 40, 46);
    UdtfValidationException stale = assertThrows(UdtfValidationException.class,
        () -> f.sql("REFRESH MATERIALIZED VIEW " + v));
    assertTrue(stale.getMessage().contains("6 rows of source '") && stale.getMessage().contains(
        "are not covered by vector index 'vec_idx', so they belong to no IVF partition. Build "
        + "the index again (ALTER TABLE … CREATE INDEX vec_idx USING … replaces it)"),
        stale.getMessage());

    f.sql("ALTER TABLE " + src + " CREATE INDEX vec_idx USING ivf_flat (vec) WITH "
        + "(num_partitions = 2)");
    assertEquals(List.of("vec_idx|WrappedArray(vec)|vector|2|46|0|0|1"), // two fragments now
        f.rows("SHOW INDEXES FROM " + src));
    Row refreshed = f.sql("REFRESH MATERIALIZED VIEW " + v).get(0);
    assertEquals("DONE", refreshed.getString(1), refreshed.toString());
    assertEquals(expectedTop3("docs", new long[] {44, 42, 40}, new long[] {45, 43, 41}),
        f.rows("SELECT id, _partition_id, rank FROM " + v));
  }

  @Test
  void otherVectorMethodsAndOrdersOfTheExtensions() throws Exception {
    String t = vectors("methods", 300); // PQ trains 256 codes per sub-vector
    // lance-spark's extension listed before ours (its parser below ours), and ours alone.
    SparkSession reversed = f.sessionWith(new LanceSparkSessionExtensions(),
        new LanceRestSparkExtensions());
    SparkSession oursAlone = f.sessionWith(new LanceRestSparkExtensions());
    assertEquals("[[1,pq_idx]]", reversed.sql("ALTER TABLE " + t + " CREATE INDEX pq_idx USING "
        + "IVF_PQ (vec) WITH (num_partitions = 2, num_sub_vectors = 1, distance_type = 'cosine')"
        + ";").collectAsList().toString());
    assertEquals("[[1,hnsw_idx]]", oursAlone.sql("ALTER TABLE " + t + " CREATE INDEX hnsw_idx "
        + "USING ivf_hnsw_sq (vec) WITH (num_partitions = 2, m = 8, ef_construction = 50)")
        .collectAsList().toString());
    f.sql("ALTER TABLE " + t + " CREATE INDEX sq_idx USING ivf_sq (vec) WITH (num_partitions = "
        + "2, metric = 'dot')");
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = Dataset.open(location("methods"), a)) {
      assertEquals(List.of("hnsw_idx", "pq_idx", "sq_idx"), ds.listIndexes().stream().sorted()
          .toList());
      assertEquals("IVF_PQ", ds.getIndexStatistics("pq_idx").get("index_type"));
      assertEquals("IVF_HNSW_SQ", ds.getIndexStatistics("hnsw_idx").get("index_type"));
    }
    List<String> shown = new ArrayList<>();
    for (Row r : reversed.sql("SHOW INDEXES FROM " + t).collectAsList()) {
      shown.add(r.getString(0) + ":" + r.getString(2));
    }
    shown.sort(null);
    // the manifest, which SHOW INDEXES reads, does not say which IVF method built an index
    assertEquals(List.of("hnsw_idx:vector", "pq_idx:vector", "sq_idx:vector"), shown);
    // lance-spark's own methods still reach it, in either order
    assertEquals("[[1,id_idx]]", reversed.sql("ALTER TABLE " + t + " CREATE INDEX id_idx USING "
        + "btree (id)").collectAsList().toString());
    SparkSession.setActiveSession(f.spark);
  }

  @Test
  void errorsNameTheTableTheColumnAndWhatToDo() {
    String t = vectors("bad", 20);
    String at = " on lance." + ns + ".bad: ";
    String create = "ALTER TABLE " + t + " CREATE INDEX v_idx USING ";

    MaterializedViewException method = assertThrows(MaterializedViewException.class,
        () -> f.sql(create + "ivf_foo (vec)"));
    assertTrue(method.getMessage().startsWith("CREATE INDEX on lance." + ns + ".bad: unknown "
        + "index method 'ivf_foo'; use one of ivf_flat, ivf_pq, ivf_sq, ivf_rq, ivf_hnsw_pq, "
        + "ivf_hnsw_sq, bitmap (or btree, fts for lance-spark's scalar and full-text indexes)"),
        method.getMessage());

    MaterializedViewException notVector = assertThrows(MaterializedViewException.class,
        () -> f.sql(create + "ivf_flat (id)"));
    assertEquals("Column 'id' of table lance." + ns + ".bad is BIGINT, not a vector: an ivf_flat "
        + "index needs a fixed-size list of floats. Index a vector column, or create the table "
        + "with this one as ARRAY<FLOAT> and TBLPROPERTIES ('id.arrow.fixed-size-list.size' = "
        + "'<dimension>')", notVector.getMessage());
    String view = "lance." + ns + ".bad_view";
    f.sql("CREATE MATERIALIZED VIEW " + view + " AS SELECT id, arr FROM lance." + ns + ".bad");
    MaterializedViewException onView = assertThrows(MaterializedViewException.class,
        () -> f.sql("ALTER TABLE " + view + " CREATE INDEX vi USING ivf_flat (arr)"));
    assertEquals("Column 'arr' of materialized view " + view + " is ARRAY<FLOAT> without a "
        + "fixed size, not a vector: an ivf_flat index needs a fixed-size list of floats. Index "
        + "a vector column, or re-create the view with TBLPROPERTIES ('arr.arrow.fixed-size-list"
        + ".size' = '<dimension>') if its SELECT computes this column (a vector column of the "
        + "source keeps its size in the view)", onView.getMessage());
    MaterializedViewException unsized = assertThrows(MaterializedViewException.class,
        () -> f.sql(create + "ivf_flat (arr)"));
    assertTrue(unsized.getMessage().startsWith("Column 'arr' of table lance." + ns + ".bad is "
        + "ARRAY<FLOAT> without a fixed size, not a vector"), unsized.getMessage());
    MaterializedViewException missing = assertThrows(MaterializedViewException.class,
        () -> f.sql(create + "ivf_flat (vector)"));
    assertEquals("Table lance." + ns + ".bad has no column 'vector' to index; its columns are "
        + "[id, vec, arr]", missing.getMessage());
    MaterializedViewException noTable = assertThrows(MaterializedViewException.class,
        () -> f.sql("ALTER TABLE lance." + ns + ".nope CREATE INDEX v_idx USING ivf_flat (vec)"));
    assertTrue(noTable.getMessage().startsWith("Table lance." + ns + ".nope does not exist"),
        noTable.getMessage());
    MaterializedViewException twoColumns = assertThrows(MaterializedViewException.class,
        () -> f.sql(create + "ivf_flat (vec, id)"));
    assertTrue(twoColumns.getMessage().startsWith("A vector index is built on one column, not 2 "
        + "[vec, id]"), twoColumns.getMessage());

    String what = "CREATE INDEX v_idx USING ivf_flat (vec)" + at;
    assertEquals(what + "num_partitions must be a positive whole number, got '0'",
        assertThrows(InvalidOptionException.class, () -> f.sql(create + "ivf_flat (vec) WITH "
            + "(num_partitions = 0)")).getMessage());
    assertEquals(what + "metric must be 'l2', 'cosine' or 'dot', got 'hamming'",
        assertThrows(InvalidOptionException.class, () -> f.sql(create + "ivf_flat (vec) WITH "
            + "(metric = 'hamming')")).getMessage());
    assertEquals(what + "ivf_flat has no option 'nprobes'; its options are distance_type, "
        + "max_iters, metric, num_partitions, sample_rate",
        assertThrows(InvalidOptionException.class, () -> f.sql(create + "ivf_flat (vec) WITH "
            + "(nprobes = 3)")).getMessage());
    assertEquals("CREATE INDEX v_idx USING ivf_pq (vec)" + at + "num_sub_vectors must divide "
        + "the vector length 2, got 16 (the default); set WITH (num_sub_vectors = n) to a divisor"
        + " of 2", assertThrows(InvalidOptionException.class, () -> f.sql(create + "ivf_pq (vec) "
            + "WITH (num_partitions = 2)")).getMessage());
    MaterializedViewException tooMany = assertThrows(MaterializedViewException.class,
        () -> f.sql(create + "ivf_flat (vec) WITH (num_partitions = 100)"));
    assertEquals("Cannot build the ivf_flat index 'v_idx' on column 'vec' of table lance." + ns
        + ".bad: Unprocessable: KMeans cannot train 100 centroids with 20 vectors; choose a "
        + "smaller K (< 20). Change the WITH options (or add rows), then run CREATE INDEX again",
        tooMany.getMessage());

    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(location("bad"), a)) {
      assertEquals(List.of(), ds.listIndexes(), "no failed statement left an index");
    }
    // PARTITION BY INDEXED without an index says what to run
    UdtfValidationException noIndex = assertThrows(UdtfValidationException.class,
        () -> f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".bad_top USING UDTF '"
            + TopKUdtf.class.getName() + "' PARTITION BY INDEXED vec OPTIONS (input_columns = "
            + "'id', order_by = 'id') AS SELECT id, vec FROM " + t));
    assertTrue(noIndex.getMessage().contains("has no vector index on column 'vec'. Create an "
        + "IVF index first"), noIndex.getMessage());
  }
}
