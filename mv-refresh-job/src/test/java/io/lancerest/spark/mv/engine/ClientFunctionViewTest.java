package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lancerest.client.LanceJson;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.function.BatchUdtf;
import io.lancerest.spark.mv.function.UdtfContext;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Chunker and UDTF views through SQL on the real directory server: the last job every kind
 * records with its commit (DESCRIBE MATERIALIZED VIEW), a UDTF view's whole life cycle, and the
 * {@code <view>__errors} tables DROP removes.
 */
public class ClientFunctionViewTest {
  static EngineFixture f;

  private static final String SKIP_ILLEGAL_STATE = "'{\"format\":\"lancerest.error_handling.v1\","
      + "\"rules\":[{\"match\":\"IllegalStateException\",\"action\":\"skip\"}]}'";

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  private static Map<String, String> describe(String view) {
    Map<String, String> info = new HashMap<>();
    for (Row r : f.sql("DESCRIBE MATERIALIZED VIEW " + view)) {
      info.put(r.getString(0), r.isNullAt(1) ? null : r.getString(1));
    }
    return info;
  }

  /** DESCRIBE's "Last job" is the job of {@code refreshRow}, with that commit's counts. */
  private static void assertLastJob(String view, Row refreshRow) throws Exception {
    String json = describe(view).get("Last job");
    assertTrue(json != null, "DESCRIBE MATERIALIZED VIEW " + view + " shows no last job");
    JsonNode j = LanceJson.mapper().readTree(json);
    assertEquals(refreshRow.getString(0), j.get("job_id").asText(), json);
    assertEquals(refreshRow.getString(1), j.get("status").asText(), json);
    assertEquals(refreshRow.getString(2), j.get("kind").asText(), json);
    assertEquals(refreshRow.getLong(3), j.get("source_version").asLong(), json);
    assertEquals(refreshRow.getLong(4), j.get("rows_inserted").asLong(), json);
    assertEquals(refreshRow.getLong(5), j.get("rows_deleted").asLong(), json);
    assertTrue(j.get("finished_at_ms").asLong() > 0, json);
    if (!"SKIPPED".equals(refreshRow.getString(1))) {
      assertEquals(Long.toString(refreshRow.getLong(3)),
          describe(view).get("Last refreshed source version"), view);
    }
  }

  private static String viewLocation(String ns, String view) {
    return CatalogBinding.of(f.spark, EngineFixture.CATALOG).locate(List.of(ns, view), "view")
        .location();
  }

  private static boolean datasetExists(String uri) {
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(uri, a)) {
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  @Test
  void everyKindRecordsItsLastJobInTheRefreshCommit() throws Exception {
    String ns = f.namespace("lj");
    String docs = "lance." + ns + ".docs";
    f.sql("CREATE TABLE " + docs + " (id BIGINT, body STRING, grp STRING)");
    f.sql("INSERT INTO " + docs + " VALUES (1, 'a b', 'x'), (2, 'c', 'y'), (3, 'd e f', 'x')");
    String q = "lance." + ns + ".q";
    String c = "lance." + ns + ".c";
    String u = "lance." + ns + ".u";
    assertLastJob(q, f.sql("CREATE MATERIALIZED VIEW " + q + " AS SELECT id, body FROM " + docs
        + " WHERE id > 1").get(0));
    assertLastJob(c, f.sql("CREATE MATERIALIZED VIEW " + c + " USING CHUNKER "
        + "'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS (input_columns = 'body', "
        + "separator = ' ') AS SELECT id, body FROM " + docs).get(0));
    assertLastJob(u, f.sql("CREATE MATERIALIZED VIEW " + u + " USING UDTF "
        + "'io.lancerest.spark.mv.udtf.TopKUdtf' PARTITION BY grp OPTIONS (k = 1, "
        + "order_by = 'id') AS SELECT grp, id FROM " + docs).get(0));

    f.sql("DELETE FROM " + docs + " WHERE id = 3");
    f.sql("INSERT INTO " + docs + " VALUES (4, 'g h', 'y')");
    for (String v : List.of(q, c, u)) {
      Row r = f.sql("REFRESH MATERIALIZED VIEW " + v + " WITH (job_id = 'nightly-" + v.substring(
          v.lastIndexOf('.') + 1) + "')").get(0);
      assertEquals("DONE", r.getString(1), r.toString());
      assertTrue(r.getLong(4) > 0 && r.getLong(5) > 0, r.toString());
      assertLastJob(v, r);
      assertTrue(describe(v).get("Last job").contains("\"job_id\":\"nightly-"), v);
    }
  }

  @Test
  void udtfViewLifeCycleThroughSql() throws Exception {
    String ns = f.namespace("udtf");
    String items = "lance." + ns + ".items";
    f.sql("CREATE TABLE " + items + " (category STRING, name STRING, price BIGINT)");
    f.sql("INSERT INTO " + items + " VALUES ('fruit', 'apple', 3), ('fruit', 'fig', 9), "
        + "('fruit', 'kiwi', 5), ('veg', 'leek', 2), ('veg', 'kale', 4)");
    String v = "lance." + ns + ".top2";
    Row created = f.sql("CREATE MATERIALIZED VIEW " + v + " USING UDTF "
        + "'io.lancerest.spark.mv.udtf.TopKUdtf' PARTITION BY category "
        + "OPTIONS (k = '2', order_by = 'price', num_cpus = 1) "
        + "AS SELECT category, name, price FROM " + items + " WHERE price > 2").get(0);
    assertEquals(List.of("DONE", "udtf", 2L, 3L), List.of(created.getString(1),
        created.getString(2), created.getLong(3), created.getLong(4)));
    assertEquals(List.of("fruit|fig|9|1", "fruit|kiwi|5|2", "veg|kale|4|1"),
        f.rows("SELECT category, name, price, rank FROM " + v));

    f.sql("INSERT INTO " + items + " VALUES ('veg', 'bean', 7), ('nut', 'pecan', 8), "
        + "('nut', 'acorn', 1)");
    Row r = f.sql("REFRESH MATERIALIZED VIEW " + v).get(0);
    assertEquals(List.of("DONE", "udtf", 3L, 5L, 3L), List.of(r.getString(1), r.getString(2),
        r.getLong(3), r.getLong(4), r.getLong(5)), "a UDTF refresh rebuilds: 3 rows replaced");
    assertEquals(List.of("fruit|fig|9|1", "fruit|kiwi|5|2", "nut|pecan|8|1", "veg|bean|7|1",
        "veg|kale|4|2"), f.rows("SELECT category, name, price, rank FROM " + v));
    assertEquals("SKIPPED", f.sql("REFRESH MATERIALIZED VIEW " + v).get(0).getString(1));

    Map<String, String> d = describe(v);
    assertEquals("udtf", d.get("Kind"));
    assertEquals("client", d.get("Mode"));
    assertEquals(ns + ".items", d.get("Source"));
    assertTrue(d.get("Definition").contains("\"filter\":\"(price > "), d.get("Definition"));
    assertTrue(d.get("Function").contains("io.lancerest.spark.mv.udtf.TopKUdtf"),
        d.get("Function"));
    assertEquals("3", d.get("Base table version"));
    assertLastJob(v, r);

    // A UDTF view has no layout columns to hide, but it is refused writes all the same.
    assertEquals(List.of("category", "name", "price", "rank"),
        List.of(f.spark.table(v).columns()));
    assertTrue(assertThrows(io.lancerest.spark.catalog.UnsupportedCatalogOperationException.class,
        () -> f.sql("INSERT INTO " + v + " VALUES ('nut', 'x', 1, 1)")).getMessage()
        .startsWith("Cannot write to materialized view " + v + ": "));

    assertEquals(List.of(ns + "|top2"), f.rows("SHOW MATERIALIZED VIEWS IN lance." + ns));
    f.sql("DROP MATERIALIZED VIEW " + v);
    assertTrue(f.rows("SHOW MATERIALIZED VIEWS IN lance." + ns).isEmpty());
    assertFalse(f.spark.catalog().tableExists(v));
    MaterializedViewNotFoundException gone = assertThrows(
        MaterializedViewNotFoundException.class, () -> f.sql("REFRESH MATERIALIZED VIEW " + v));
    assertEquals("Materialized view " + v + " does not exist", gone.getMessage());
  }

  @Test
  void dropRemovesTheErrorsTablesOfChunkerAndUdtfViews() throws Exception {
    String ns = f.namespace("err");
    String docs = "lance." + ns + ".docs";
    f.sql("CREATE TABLE " + docs + " (id BIGINT, body STRING, grp STRING)");
    f.sql("INSERT INTO " + docs + " VALUES (1, 'fine words', 'ok'), (2, 'BOOM here', 'bad'), "
        + "(3, 'more', 'ok')");
    String c = "lance." + ns + ".c";
    Row cr = f.sql("CREATE MATERIALIZED VIEW " + c + " USING CHUNKER "
        + "'io.lancerest.spark.mv.chunker.TestChunkers$Failing' OPTIONS (input_columns = "
        + "'body', output_schema = 'chunk STRING NOT NULL, char_offset INT NOT NULL', "
        + "error_handling = " + SKIP_ILLEGAL_STATE + ") AS SELECT id, body FROM "
        + docs).get(0);
    String u = "lance." + ns + ".u";
    Row ur = f.sql("CREATE MATERIALIZED VIEW " + u + " USING UDTF '"
        + FailOnBad.class.getName() + "' PARTITION BY grp OPTIONS (error_handling = "
        + SKIP_ILLEGAL_STATE + ") AS SELECT grp, id FROM " + docs).get(0);
    assertEquals(List.of("PARTIAL", 1L), List.of(cr.getString(1), cr.getLong(6)));
    assertEquals(List.of("PARTIAL", 1L), List.of(ur.getString(1), ur.getLong(6)));
    assertLastJob(c, cr);
    assertLastJob(u, ur);
    assertEquals(List.of("ok|2"), f.rows("SELECT grp, n FROM " + u));

    for (String name : List.of("c", "u")) {
      String errorsTable = ViewDrop.errorTableLocations(viewLocation(ns, name)).get(0);
      assertTrue(datasetExists(errorsTable), "refresh recorded its skips in " + errorsTable);
      assertEquals(1, io.lancerest.spark.mv.fragments.LanceReads.reader(f.spark, Map.of(), null)
          .load(errorsTable).count());
      f.sql("DROP MATERIALIZED VIEW lance." + ns + "." + name);
      assertFalse(datasetExists(errorsTable), "DROP removed " + errorsTable);
      assertFalse(f.spark.catalog().tableExists("lance." + ns + "." + name));
    }
    assertEquals(List.of(ns + "|docs"), f.rows("SHOW TABLES IN lance." + ns).stream()
        .map(s -> s.substring(0, s.lastIndexOf('|'))).toList());
  }

  /** UDTF view {@code lance.<ns>.u} of {@link FailOnBad} over two good rows, created. */
  private static String failOnBadView(String ns) {
    String docs = "lance." + ns + ".docs";
    f.sql("CREATE TABLE " + docs + " (id BIGINT, grp STRING)");
    f.sql("INSERT INTO " + docs + " VALUES (1, 'ok'), (2, 'ok')");
    String u = "lance." + ns + ".u";
    f.sql("CREATE MATERIALIZED VIEW " + u + " USING UDTF '" + FailOnBad.class.getName()
        + "' PARTITION BY grp AS SELECT grp, id FROM " + docs);
    return u;
  }

  @Test
  void dropLeavesADatasetAtTheErrorsPathThatItDidNotWrite() throws Exception {
    String ns = f.namespace("foreign");
    String u = failOnBadView(ns);
    // Something that is not an errors table sits where the view's errors table would go.
    String path = ViewDrop.errorTableLocations(viewLocation(ns, "u")).get(0);
    org.apache.arrow.vector.types.pojo.Schema other = new org.apache.arrow.vector.types.pojo.Schema(
        List.of(org.apache.arrow.vector.types.pojo.Field.nullable("mine",
            new org.apache.arrow.vector.types.pojo.ArrowType.Utf8())));
    try (BufferAllocator a = new RootAllocator()) {
      org.lance.Dataset.create(a, path, other, new org.lance.WriteParams.Builder().build())
          .close();
    }
    f.sql("DROP MATERIALIZED VIEW " + u);
    assertFalse(f.spark.catalog().tableExists(u));
    assertTrue(datasetExists(path), "DROP must not delete a dataset it did not write: " + path);
  }

  @Test
  void dropRemovesTheResumeCheckpointsOfAFailedUdtfRefresh() throws Exception {
    String ns = f.namespace("ckpt");
    String u = failOnBadView(ns);
    String checkpoints = io.lancerest.spark.mv.udtf.PartitionCheckpoints.location(
        viewLocation(ns, "u"));
    assertFalse(datasetExists(checkpoints), "a committed refresh leaves no checkpoints");
    f.sql("INSERT INTO lance." + ns + ".docs VALUES (3, 'bad')");

    assertThrows(Exception.class, () -> f.sql("REFRESH MATERIALIZED VIEW " + u));
    assertTrue(datasetExists(checkpoints), "partition ok is checkpointed in " + checkpoints);

    f.sql("DROP MATERIALIZED VIEW " + u);
    assertFalse(datasetExists(checkpoints), "DROP removed " + checkpoints);
    assertFalse(f.spark.catalog().tableExists(u));
  }

  /** Counts the rows of a partition; partition {@code bad} fails. */
  public static final class FailOnBad implements BatchUdtf {
    @Override
    public StructType outputSchema(StructType input, Map<String, String> options) {
      return new StructType().add("grp", DataTypes.StringType).add("n", DataTypes.LongType,
          false);
    }

    @Override
    public Iterator<Row> process(UdtfContext ctx, Iterator<Row> rows) {
      if ("bad".equals(String.valueOf(ctx.partitionKey()))) {
        throw new IllegalStateException("partition bad cannot be processed");
      }
      long n = 0;
      while (rows.hasNext()) {
        rows.next();
        n++;
      }
      return List.of(RowFactory.create(ctx.partitionKey(), n)).iterator();
    }
  }
}
