package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.chunker.TextSplitter;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.function.Chunker;
import io.lancerest.spark.mv.udtf.TopKUdtf;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;

/**
 * A source column that is a vector (a fixed-size list of floats) stays one in every kind of
 * view and in CTAS/RTAS, so the view can carry a vector index; a computed column becomes one
 * when the CREATE declares its size; a vector of the wrong length fails the refresh.
 */
class VectorColumnsTest {
  static EngineFixture f;
  static String ns;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of("mv.mode", "client"));
    ns = f.namespace("vcol");
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  /** {@code (id BIGINT, vec 8-d vector, txt STRING, arr ARRAY<FLOAT>)}, ids {@code [0, n)}. */
  private static String source(String name, int n) {
    String t = "lance." + ns + "." + name;
    f.sql("CREATE TABLE " + t + " (id BIGINT, vec ARRAY<FLOAT>, txt STRING, arr ARRAY<FLOAT>) "
        + "TBLPROPERTIES ('vec.arrow.fixed-size-list.size' = '8')");
    insert(t, 0, n);
    return t;
  }

  /** Rows {@code [from, to)}; {@code arr} has two elements. */
  private static void insert(String t, int from, int to) {
    f.sql("INSERT INTO " + t + " SELECT id, transform(sequence(0, 7), i -> CAST((id % 2) * 100 "
        + "+ id * 0.01 + i AS FLOAT)), concat('alpha beta gamma ', CAST(id AS STRING)), "
        + "array(CAST(id AS FLOAT), CAST(id % 2 AS FLOAT)) FROM range(" + from + ", " + to
        + ", 1, 1)");
  }

  private static String location(String name) {
    return CatalogBinding.of(f.spark, EngineFixture.CATALOG).locate(List.of(ns, name), "table")
        .location();
  }

  /** The Lance type of a table's column, e.g. {@code FixedSizeList(8)<Float(SINGLE)>}. */
  static String lanceType(String table, String column) {
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = Dataset.open(location(table), a)) {
      Field field = ds.getSchema().findField(column);
      return field.getType() + "<" + field.getChildren().get(0).getType() + ">";
    }
  }

  private static final String VECTOR_8 = "FixedSizeList(8)<FloatingPoint(SINGLE)>";

  /** Builds an IVF_FLAT index on the column from SQL; its name as the statement answers it. */
  private static String index(String table, String column) {
    return f.sql("ALTER TABLE lance." + ns + "." + table + " CREATE INDEX vidx USING ivf_flat ("
        + column + ") WITH (num_partitions = 2)").get(0).getString(1);
  }

  @Test
  void aQueryViewKeepsTheSourcesVectorThroughAFilterAndARename() {
    String s = source("qsrc", 40);
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".q_even AS SELECT id, vec FROM " + s
        + " WHERE id % 2 = 0");
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".q_renamed AS SELECT id, vec AS emb, txt "
        + "FROM " + s);
    assertEquals(VECTOR_8, lanceType("q_even", "vec"));
    assertEquals(VECTOR_8, lanceType("q_renamed", "emb"));
    assertEquals("vidx", index("q_even", "vec"));
    assertEquals("vidx", index("q_renamed", "emb"));

    insert(s, 40, 50);
    f.sql("REFRESH MATERIALIZED VIEW lance." + ns + ".q_even");
    f.sql("REFRESH MATERIALIZED VIEW lance." + ns + ".q_renamed");
    assertEquals(VECTOR_8, lanceType("q_even", "vec"));
    assertEquals(VECTOR_8, lanceType("q_renamed", "emb"));
    assertEquals(List.of("25"), f.rows("SELECT count(*) FROM lance." + ns + ".q_even"));
    assertEquals(List.of("7.48"), f.rows("SELECT CAST(round(vec[7], 2) AS STRING) FROM lance."
        + ns + ".q_even WHERE id = 48"));
    assertEquals("vidx", index("q_even", "vec"));
    assertEquals("vidx", index("q_renamed", "emb"));
  }

  @Test
  void ctasAndRtasKeepTheSourcesVector() {
    String s = source("csrc", 20);
    f.sql("CREATE TABLE lance." + ns + ".c_copy AS SELECT id, vec FROM " + s + " WHERE id < 10");
    assertEquals(VECTOR_8, lanceType("c_copy", "vec"));
    assertEquals("vidx", index("c_copy", "vec"));
    // (an RTAS of a table that has an index is left out: lance-core then fails to build an
    // index on the replaced table, whatever the column's type)
    f.sql("CREATE TABLE lance." + ns + ".c_replaced AS SELECT id FROM " + s);
    f.sql("REPLACE TABLE lance." + ns + ".c_replaced AS SELECT id, vec AS emb FROM " + s);
    assertEquals(VECTOR_8, lanceType("c_replaced", "emb"));
    assertEquals(List.of("20"), f.rows("SELECT count(*) FROM lance." + ns + ".c_replaced"));
    assertEquals("vidx", index("c_replaced", "emb"));
  }

  @Test
  void aChunkerViewCarriesTheSourcesVector() {
    String s = source("chsrc", 20);
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".chunks USING CHUNKER '"
        + TextSplitter.class.getName() + "' OPTIONS (input_columns = 'txt', separator = ' ') "
        + "AS SELECT id, vec, txt FROM " + s);
    assertEquals(VECTOR_8, lanceType("chunks", "vec"));
    assertEquals(List.of("80"), f.rows("SELECT count(*) FROM lance." + ns + ".chunks"));
    assertEquals("vidx", index("chunks", "vec"));
    insert(s, 20, 25);
    f.sql("REFRESH MATERIALIZED VIEW lance." + ns + ".chunks");
    assertEquals(VECTOR_8, lanceType("chunks", "vec"));
    assertEquals(List.of("100"), f.rows("SELECT count(*) FROM lance." + ns + ".chunks"));
    assertEquals("vidx", index("chunks", "vec"));
  }

  @Test
  void aUdtfOutputOfTheSourcesVectorStaysAVector() {
    String s = source("usrc", 20);
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".top USING UDTF '"
        + TopKUdtf.class.getName() + "' PARTITION BY grp OPTIONS (order_by = 'id', k = '5') "
        + "AS SELECT id, vec, id % 2 AS grp FROM " + s);
    assertEquals(VECTOR_8, lanceType("top", "vec"));
    assertEquals(List.of("10"), f.rows("SELECT count(*) FROM lance." + ns + ".top"));
    assertEquals("vidx", index("top", "vec"));
    insert(s, 20, 25);
    f.sql("REFRESH MATERIALIZED VIEW lance." + ns + ".top");
    assertEquals(VECTOR_8, lanceType("top", "vec"));
    assertEquals(List.of("24|1", "23|1"), f.sql("SELECT id, rank FROM lance." + ns + ".top "
        + "WHERE rank = 1 ORDER BY id DESC").stream().map(r -> r.get(0) + "|" + r.get(1))
        .toList());
    assertEquals("vidx", index("top", "vec"));
  }

  @Test
  void aComputedColumnIsAVectorOfTheDeclaredSize() {
    String s = source("dsrc", 20);
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".declared TBLPROPERTIES "
        + "('emb.arrow.fixed-size-list.size' = '2') AS SELECT id, "
        + "array(arr[0] * 2, arr[1]) AS emb FROM " + s);
    assertEquals("FixedSizeList(2)<FloatingPoint(SINGLE)>", lanceType("declared", "emb"));
    assertEquals("vidx", index("declared", "emb"));
    insert(s, 20, 24);
    f.sql("REFRESH MATERIALIZED VIEW lance." + ns + ".declared");
    assertEquals(List.of("[46.0, 1.0]"), f.rows("SELECT CAST(emb AS STRING) FROM lance." + ns
        + ".declared WHERE id = 23"));
    assertEquals("vidx", index("declared", "emb"));
  }

  @Test
  void aFunctionOutputIsAVectorOfTheDeclaredSizeAndACarriedListIsNot() {
    String s = source("fsrc", 10);
    String v = "lance." + ns + ".top_arr";
    f.sql("CREATE MATERIALIZED VIEW " + v + " USING UDTF '" + TopKUdtf.class.getName()
        + "' PARTITION BY grp OPTIONS (order_by = 'id', k = '2') TBLPROPERTIES "
        + "('arr.arrow.fixed-size-list.size' = '2') AS SELECT id, arr, id % 2 AS grp FROM " + s);
    assertEquals("FixedSizeList(2)<FloatingPoint(SINGLE)>", lanceType("top_arr", "arr"));
    assertEquals(List.of("8|[8.0, 0.0]", "9|[9.0, 1.0]"), f.rows("SELECT id, CAST(arr AS "
        + "STRING) FROM " + v + " WHERE rank = 1"));
    assertEquals("vidx", index("top_arr", "arr"));

    String c = "lance." + ns + ".chunks_arr";
    MaterializedViewException e = assertThrows(MaterializedViewException.class,
        () -> f.sql("CREATE MATERIALIZED VIEW " + c + " USING CHUNKER '"
            + TextSplitter.class.getName() + "' OPTIONS (input_columns = 'txt', separator = ' ') "
            + "TBLPROPERTIES ('arr.arrow.fixed-size-list.size' = '2') AS SELECT id, arr, txt "
            + "FROM " + s));
    assertEquals("Column 'arr' of view " + c + " cannot be declared a vector with TBLPROPERTIES "
        + "'arr.arrow.fixed-size-list.size': it is copied from the view's source, where it is a "
        + "list without a fixed size. Declare its size on the source table, or compute the "
        + "vector in the view's function and declare it there", e.getMessage());
    MaterializedViewException typo = assertThrows(MaterializedViewException.class,
        () -> f.sql("CREATE MATERIALIZED VIEW " + c + " TBLPROPERTIES "
            + "('emb.arrow.fixed-size-list.size' = '2') AS SELECT id, arr FROM " + s));
    assertEquals("TBLPROPERTIES 'emb.arrow.fixed-size-list.size' of view " + c + " names no "
        + "column of the view; its columns are [id, arr] (names are case-sensitive here)",
        typo.getMessage());
    MaterializedViewException notFloats = assertThrows(MaterializedViewException.class,
        () -> f.sql("CREATE MATERIALIZED VIEW " + c + " TBLPROPERTIES "
            + "('txt.arrow.fixed-size-list.size' = '2') AS SELECT id, txt FROM " + s));
    assertEquals("Column 'txt' of view " + c + " is STRING; TBLPROPERTIES "
        + "'txt.arrow.fixed-size-list.size' declares a vector, which must be ARRAY<FLOAT> or "
        + "ARRAY<DOUBLE>. Cast the column, or remove the property", notFloats.getMessage());
    MaterializedViewException aggregate = assertThrows(MaterializedViewException.class,
        () -> f.sql("CREATE MATERIALIZED VIEW " + c + " TBLPROPERTIES "
            + "('n.arrow.fixed-size-list.size' = '2') AS SELECT txt, count(*) AS n FROM " + s
            + " GROUP BY txt"));
    assertEquals("View " + c + " is an aggregate view, which does not make vector columns; "
        + "remove TBLPROPERTIES 'n.arrow.fixed-size-list.size', or make a view without GROUP BY "
        + "whose column is the vector", aggregate.getMessage());
    assertEquals(List.of(), f.rows("SHOW TABLES IN lance." + ns + " LIKE 'chunks_arr'"));
  }

  @Test
  void aDeclaredSizeThatContradictsTheSourceIsRefusedAtCreate() {
    String s = source("xsrc", 4);
    String v = "lance." + ns + ".contradicts";
    MaterializedViewException e = assertThrows(MaterializedViewException.class,
        () -> f.sql("CREATE MATERIALIZED VIEW " + v + " TBLPROPERTIES "
            + "('vec.arrow.fixed-size-list.size' = '4') AS SELECT id, vec FROM " + s));
    assertEquals("Column 'vec' of view " + v + " is a vector of 8 floats in its source, but "
        + "TBLPROPERTIES declares 'vec.arrow.fixed-size-list.size' = '4'. Remove the property "
        + "(a vector keeps its size) or declare 8", e.getMessage());
    assertEquals(List.of(), f.rows("SHOW TABLES IN lance." + ns + " LIKE 'contradicts'"));
  }

  @Test
  void aVectorOfTheWrongLengthFailsTheRefreshAndLeavesTheViewUnchanged() {
    String s = source("wsrc", 6);
    String v = "lance." + ns + ".wrong";
    f.sql("CREATE MATERIALIZED VIEW " + v + " TBLPROPERTIES "
        + "('emb.arrow.fixed-size-list.size' = '2') AS SELECT id, arr AS emb FROM " + s);
    long version = version(v);
    f.sql("INSERT INTO " + s + " SELECT 7, transform(sequence(0, 7), i -> CAST(i AS FLOAT)), "
        + "'x', array(CAST(1 AS FLOAT), CAST(2 AS FLOAT), CAST(3 AS FLOAT))");
    MaterializedViewException e = assertThrows(MaterializedViewException.class,
        () -> f.sql("REFRESH MATERIALIZED VIEW " + v));
    assertEquals("Column 'emb' of view " + v + " is a vector of 2 floats, but a row gives 3 "
        + "elements (source row _rowid 6). Make the SELECT give 2 non-NULL floats (or NULL) for "
        + "every row, or re-create the view with another definition. Nothing was committed; the "
        + "view is unchanged", e.getMessage());
    assertEquals(version, version(v));
    assertEquals(List.of("6"), f.rows("SELECT count(*) FROM " + v));

    f.sql("DELETE FROM " + s + " WHERE id = 7");
    f.sql("INSERT INTO " + s + " SELECT 8, transform(sequence(0, 7), i -> CAST(i AS FLOAT)), "
        + "'x', array(CAST(1 AS FLOAT), NULL)");
    MaterializedViewException nullElement = assertThrows(MaterializedViewException.class,
        () -> f.sql("REFRESH MATERIALIZED VIEW " + v));
    assertEquals("Column 'emb' of view " + v + " is a vector of 2 floats, but a row gives one "
        + "with a NULL element at position 1 (source row _rowid 7). Make the SELECT give 2 "
        + "non-NULL floats (or NULL) for every row, or re-create the view with another "
        + "definition. Nothing was committed; the view is unchanged", nullElement.getMessage());
    assertEquals(version, version(v));

    // a NULL vector is kept as NULL
    f.sql("DELETE FROM " + s + " WHERE id = 8");
    f.sql("INSERT INTO " + s + " SELECT 9, transform(sequence(0, 7), i -> CAST(i AS FLOAT)), "
        + "'x', NULL");
    f.sql("REFRESH MATERIALIZED VIEW " + v);
    assertEquals(List.of("0|false", "1|false", "2|false", "3|false", "4|false", "5|false",
        "9|true"), f.rows("SELECT id, emb IS NULL FROM " + v));
  }

  @Test
  void aUdtfVectorOfTheWrongLengthFailsTheRefreshEvenUnderASkipRule() {
    String s = source("uwsrc", 4);
    String v = "lance." + ns + ".top_wrong";
    f.sql("CREATE MATERIALIZED VIEW " + v + " USING UDTF '" + TopKUdtf.class.getName()
        + "' PARTITION BY grp OPTIONS (order_by = 'id', k = '2', error_handling = '{\"format\":"
        + "\"lancerest.error_handling.v1\",\"rules\":[{\"match\":\"Exception\",\"action\":"
        + "\"skip\"}]}') TBLPROPERTIES ('arr.arrow.fixed-size-list.size' = '2') AS SELECT id, "
        + "arr, id % 2 AS grp FROM " + s);
    long version = version(v);
    f.sql("INSERT INTO " + s + " SELECT 7, transform(sequence(0, 7), i -> CAST(i AS FLOAT)), "
        + "'x', array(CAST(1 AS FLOAT), CAST(2 AS FLOAT), CAST(3 AS FLOAT))");
    MaterializedViewException e = assertThrows(MaterializedViewException.class,
        () -> f.sql("REFRESH MATERIALIZED VIEW " + v));
    assertTrue(e.getMessage().contains("UDTF 'TopKUdtf' (" + TopKUdtf.class.getName() + ") for "
        + "partition grp=1 returned 3 elements for column 'arr', a vector of 2 floats in the "
        + "view. Make the function return 2 non-NULL floats (or NULL) for it, or declare another "
        + "size"), e.getMessage());
    assertEquals(version, version(v));
    assertEquals(List.of("0", "1", "2", "3"), f.rows("SELECT id FROM " + v + " ORDER BY id"));

    f.sql("DELETE FROM " + s + " WHERE id = 7");
    f.sql("INSERT INTO " + s + " SELECT 9, transform(sequence(0, 7), i -> CAST(i AS FLOAT)), "
        + "'x', array(CAST(1 AS FLOAT), NULL)");
    MaterializedViewException nullElement = assertThrows(MaterializedViewException.class,
        () -> f.sql("REFRESH MATERIALIZED VIEW " + v));
    assertTrue(nullElement.getMessage().contains("for partition grp=1 returned a NULL element "
        + "at position 1 for column 'arr', a vector of 2 floats in the view"),
        nullElement.getMessage());
    assertEquals(version, version(v));
  }

  /** Emits one chunk per text with a vector {@code emb}: 3 floats for "three", a NULL for "hole". */
  public static class VectorChunker implements Chunker {
    @Override
    public StructType outputSchema(Map<String, String> options, StructType inputSchema) {
      return new StructType().add("chunk", DataTypes.StringType)
          .add("emb", DataTypes.createArrayType(DataTypes.FloatType));
    }

    @Override
    public Iterator<Row> chunk(Row input) {
      String text = input.getString(0);
      List<Float> emb = text.contains("three") ? Arrays.asList(1f, 2f, 3f)
          : text.contains("hole") ? Arrays.asList(1f, null) : Arrays.asList(1f, 2f);
      return List.of(RowFactory.create(text, emb)).iterator();
    }
  }

  @Test
  void aChunkerVectorOfTheWrongLengthFailsTheRefresh() {
    String s = source("cwsrc", 3);
    String v = "lance." + ns + ".chunk_vec";
    f.sql("CREATE MATERIALIZED VIEW " + v + " USING CHUNKER '" + VectorChunker.class.getName()
        + "' OPTIONS (input_columns = 'txt') TBLPROPERTIES ('emb.arrow.fixed-size-list.size' = "
        + "'2') AS SELECT id, txt FROM " + s);
    assertEquals("FixedSizeList(2)<FloatingPoint(SINGLE)>", lanceType("chunk_vec", "emb"));
    assertEquals(List.of("3"), f.rows("SELECT count(*) FROM " + v));
    long version = version(v);
    f.sql("INSERT INTO " + s + " SELECT 5, NULL, 'three', NULL");
    MaterializedViewException e = assertThrows(MaterializedViewException.class,
        () -> f.sql("REFRESH MATERIALIZED VIEW " + v));
    assertTrue(e.getMessage().contains("emitted 3 elements for column 'emb' declared as a "
        + "fixed-size list of 2 (source row id 3, child 0). Fix the chunker or its declared "
        + "output schema"), e.getMessage());
    assertEquals(version, version(v));
    f.sql("DELETE FROM " + s + " WHERE id = 5");
    f.sql("INSERT INTO " + s + " SELECT 6, NULL, 'hole', NULL");
    MaterializedViewException hole = assertThrows(MaterializedViewException.class,
        () -> f.sql("REFRESH MATERIALIZED VIEW " + v));
    assertTrue(hole.getMessage().contains("emitted a NULL element at position 1 for column "
        + "'emb', a vector of 2 floats (source row id 4, child 0)"), hole.getMessage());
    assertEquals(version, version(v));
  }

  @Test
  void describeNamesTheVectorColumns() {
    String s = source("desrc", 2);
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".described TBLPROPERTIES "
        + "('emb.arrow.fixed-size-list.size' = '2') AS SELECT id, vec, arr AS emb, txt FROM " + s);
    assertEquals(List.of("vec (8 floats), emb (2 floats)"), f.sql("DESCRIBE MATERIALIZED VIEW "
        + "lance." + ns + ".described").stream().filter(r -> r.getString(0)
        .equals("Vector columns")).map(r -> r.getString(1)).toList());
  }

  private static long version(String table) {
    return f.sql("SHOW TBLPROPERTIES " + table).stream()
        .filter(r -> r.getString(0).equals("current-version"))
        .mapToLong(r -> Long.parseLong(r.getString(1))).findFirst().orElseThrow();
  }
}
