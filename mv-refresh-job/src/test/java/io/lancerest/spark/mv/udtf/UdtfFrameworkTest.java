package io.lancerest.spark.mv.udtf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.engine.CatalogBinding;
import io.lancerest.spark.mv.engine.EngineFixture;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;
import org.lance.index.DistanceType;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.vector.VectorIndexParams;

/**
 * UDTF views created and refreshed through the framework (SQL CREATE / REFRESH MATERIALIZED
 * VIEW on the catalog), not through {@link UdtfRefresh} directly.
 */
class UdtfFrameworkTest {
  static EngineFixture f;
  static String ns;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of("mv.mode", "client"));
    ns = f.namespace("udtf");
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  private static String location(String table) {
    return CatalogBinding.of(f.spark, EngineFixture.CATALOG).locate(List.of(ns, table), "table")
        .location();
  }

  @Test
  void partitionByIndexedGivesTheDerivedSchemaThePartitionIdColumn() {
    String src = "lance." + ns + ".vecs";
    f.sql("CREATE TABLE " + src + " (id BIGINT, vec ARRAY<FLOAT>) TBLPROPERTIES "
        + "('vec.arrow.fixed-size-list.size' = '2')");
    StringBuilder values = new StringBuilder();
    for (int i = 0; i < 40; i++) {
      // Two well separated clusters, so a 2-partition IVF index splits them 20 / 20.
      float c = i % 2 == 0 ? 0f : 100f;
      values.append(i == 0 ? "" : ", ").append("(").append(i).append(", array(CAST(")
          .append(c + i * 0.01f).append(" AS FLOAT), CAST(").append(c).append(" AS FLOAT)))");
    }
    f.sql("INSERT INTO " + src + " VALUES " + values);
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(location("vecs"), a)) {
      ds.createIndex(List.of("vec"), IndexType.IVF_FLAT, Optional.of("vec_idx"),
          IndexParams.builder().setVectorIndexParams(VectorIndexParams.ivfFlat(2,
              DistanceType.L2)).build(), true);
    }
    String v = "lance." + ns + ".top_per_cell";
    // No output_schema: TopKUdtf derives it from its input, which includes _partition_id.
    f.sql("CREATE MATERIALIZED VIEW " + v + " USING UDTF '" + TopKUdtf.class.getName()
        + "' PARTITION BY INDEXED vec OPTIONS (input_columns = 'id', order_by = 'id', "
        + "k = '3', descending = 'false') AS SELECT id, vec FROM " + src);
    List<String> columns = List.of(f.spark.table(v).columns());
    assertEquals(List.of("id", IvfPartitions.PARTITION_ID, "rank"), columns);

    f.sql("REFRESH MATERIALIZED VIEW " + v);

    // The three smallest ids of each cluster, tagged with their cluster's IVF partition.
    List<Row> rows = f.sql("SELECT id, _partition_id, rank FROM " + v + " ORDER BY id");
    List<Long> ids = new ArrayList<>();
    Set<Integer> evenCell = new HashSet<>();
    Set<Integer> oddCell = new HashSet<>();
    for (Row r : rows) {
      ids.add(r.getLong(0));
      (r.getLong(0) % 2 == 0 ? evenCell : oddCell).add(r.getInt(1));
    }
    assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L), ids);
    assertEquals(1, evenCell.size(), "one partition id per cluster: " + rows);
    assertEquals(1, oddCell.size(), "one partition id per cluster: " + rows);
    assertTrue(!evenCell.equals(oddCell), "the clusters are different partitions: " + rows);
  }

  @Test
  void sourceLimitTakesTheFirstRowsInRowIdOrderOnEveryRebuild() {
    String src = "lance." + ns + ".items";
    f.sql("CREATE TABLE " + src + " (id BIGINT, grp STRING, score INT)");
    // Separate inserts: separate fragments, so ids 1..4 hold the smallest row ids.
    f.sql("INSERT INTO " + src + " VALUES (1, 'a', 10), (2, 'b', 20), (3, 'a', 30), "
        + "(4, 'b', -1)");
    f.sql("INSERT INTO " + src + " VALUES (5, 'a', 50), (6, 'b', 60), (7, 'a', 70)");
    String v = "lance." + ns + ".first3";
    f.sql("CREATE MATERIALIZED VIEW " + v + " USING UDTF '" + TopKUdtf.class.getName()
        + "' PARTITION BY grp OPTIONS (order_by = 'score', k = '10') AS SELECT id, grp, score "
        + "FROM " + src + " WHERE score > 0 LIMIT 3");

    f.sql("REFRESH MATERIALIZED VIEW " + v);
    assertEquals(List.of("1|a|10|2", "2|b|20|1", "3|a|30|1"),
        f.rows("SELECT id, grp, score, rank FROM " + v));

    // New rows come after the limit: a rebuild at the new version sees the same three rows.
    f.sql("INSERT INTO " + src + " VALUES (0, 'a', 99)");
    f.sql("REFRESH MATERIALIZED VIEW " + v);
    assertEquals(List.of("1|a|10|2", "2|b|20|1", "3|a|30|1"),
        f.rows("SELECT id, grp, score, rank FROM " + v));
  }
}
