package io.lancerest.examples;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.CreateNamespaceRequest;
import io.lancerest.client.model.CreateTableRequest;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DescribeTableResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.lance.namespace.RestAdapter;

/**
 * The quickstart: runs end to end on the embedded default, the upstream REST namespace server
 * ({@code RestAdapter("dir")}) over a local warehouse folder, which it resets on every run.
 *
 * <p>Usage: {@code Quickstart [--warehouse DIR]} (default {@code examples/target/quickstart-warehouse};
 * a DIR given is taken from the directory the command was run in, {@link CallerPaths}).
 */
public final class Quickstart {
  private Quickstart() {}

  public static void main(String[] args) throws Exception {
    boolean given = args.length >= 2 && args[0].equals("--warehouse");
    Path warehouse = given ? CallerPaths.resolve(args[1])
        : Path.of("target/quickstart-warehouse").toAbsolutePath();
    resetWarehouse(warehouse, given);
    long start = System.nanoTime();
    RestAdapter server = new RestAdapter("dir", Map.of("root", warehouse.toString()),
        "127.0.0.1", 0);
    server.start();
    String uri = "http://127.0.0.1:" + server.getPort();
    System.out.println("== Embedded REST namespace server on " + uri + " (root " + warehouse + ")");
    SparkSession spark = null;
    try (LanceRestClient client = LanceRestClient.create(Map.of("uri", uri));
         BufferAllocator allocator = new RootAllocator()) {
      restClientTour(client, allocator);
      spark = SparkSession.builder()
          .appName("lance-rest-quickstart")
          .master("local[2]")
          .config("spark.ui.enabled", "false")
          .config("spark.sql.shuffle.partitions", "4")
          .config("spark.sql.catalog.lance", "io.lancerest.spark.catalog.LanceRestCatalog")
          .config("spark.sql.catalog.lance.uri", uri)
          .config("spark.sql.extensions", "io.lancerest.spark.LanceRestSparkExtensions")
          .getOrCreate();
      spark.sparkContext().setLogLevel("WARN");
      sparkSqlTour(spark);
      materializedViewTour(spark);
    } finally {
      if (spark != null) {
        spark.stop();
      }
      server.close();
    }
    System.out.printf("%n== Quickstart finished in %.1f s%n", (System.nanoTime() - start) / 1e9);
  }

  /**
   * The REST client on its own: namespace, table and listing. The upstream dir server implements
   * the metadata operations but not the data ones (InsertIntoTable, QueryTable, CountTableRows
   * answer "not supported"), so rows are written and read through Spark below.
   */
  static void restClientTour(LanceRestClient client, BufferAllocator allocator) {
    List<String> ns = List.of("quickstart");
    List<String> table = List.of("quickstart", "cities");
    client.createNamespace(new CreateNamespaceRequest().id(ns)
        .properties(Map.of("owner", "quickstart")));
    System.out.println("created namespace " + ns);

    Schema schema = new Schema(List.of(
        new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
        new Field("name", FieldType.nullable(new ArrowType.Utf8()), null)));
    try (VectorSchemaRoot first = rows(schema, allocator, new long[] {1, 2, 3},
        new String[] {"Lisbon", "Oslo", "Kyoto"})) {
      client.createTable(new CreateTableRequest().id(table), first);
    }
    DescribeTableResponse d = client.describeTable(
        new DescribeTableRequest().id(table).loadDetailedMetadata(true));
    System.out.println("created table " + table + " with 3 rows at version " + d.getVersion()
        + ", location " + d.getLocation());
    System.out.println("namespaces: " + client.listAllNamespaces(List.of()).toList());
    System.out.println("tables in " + ns + ": " + client.listAllTables(ns).toList());
  }

  /** Spark SQL through the catalog: writes, reads, DML, time travel and metadata. */
  static void sparkSqlTour(SparkSession spark) {
    section("Spark SQL on catalog 'lance'");
    sql(spark, "SHOW NAMESPACES IN lance");
    sql(spark, "SHOW TABLES IN lance.quickstart");
    sql(spark, "INSERT INTO lance.quickstart.cities VALUES (4, 'Quito'), (5, 'Accra')");
    show(spark, "SELECT id, name FROM lance.quickstart.cities ORDER BY id");
    sql(spark, "UPDATE lance.quickstart.cities SET name = 'Porto' WHERE id = 1");
    sql(spark, "DELETE FROM lance.quickstart.cities WHERE id = 5");
    show(spark, "SELECT id, name FROM lance.quickstart.cities ORDER BY id");
    show(spark, "SELECT id, name FROM lance.quickstart.cities VERSION AS OF 1 ORDER BY id");
    sql(spark, "CREATE TABLE lance.quickstart.big_cities TBLPROPERTIES ('team' = 'geo', 'enable_stable_row_ids' = 'true') "
        + "AS SELECT id, upper(name) AS name FROM lance.quickstart.cities WHERE id > 2");
    show(spark, "SELECT * FROM lance.quickstart.big_cities ORDER BY id");
    show(spark, "SHOW TBLPROPERTIES lance.quickstart.big_cities");
  }

  /**
   * One materialized view of each kind over a generated document table, refreshed, then
   * refreshed again incrementally after the source changes.
   */
  static void materializedViewTour(SparkSession spark) {
    section("Materialized views");
    sql(spark, "CREATE TABLE lance.quickstart.docs (id BIGINT, category STRING, title STRING, "
        + "body STRING, score INT) TBLPROPERTIES ('enable_stable_row_ids' = 'true')");
    spark.sql("INSERT INTO lance.quickstart.docs " + documents(1, 200)).collect();
    System.out.println("inserted 200 generated documents");

    long t0 = System.nanoTime();
    sql(spark, "CREATE MATERIALIZED VIEW lance.quickstart.good_docs AS "
        + "SELECT id, upper(title) AS title, score * 10 AS points FROM lance.quickstart.docs "
        + "WHERE score >= 7");
    long tQuery = System.nanoTime() - t0;

    t0 = System.nanoTime();
    sql(spark, "CREATE MATERIALIZED VIEW lance.quickstart.passages "
        + "USING CHUNKER 'io.lancerest.spark.mv.chunker.TextSplitter' "
        + "OPTIONS (input_columns = 'body', chunk_size = 60, overlap = 10) "
        + "AS SELECT id, title, body FROM lance.quickstart.docs");
    long tChunker = System.nanoTime() - t0;

    t0 = System.nanoTime();
    sql(spark, "CREATE MATERIALIZED VIEW lance.quickstart.top_docs "
        + "USING UDTF 'io.lancerest.spark.mv.udtf.TopKUdtf' PARTITION BY category "
        + "OPTIONS (k = '2', order_by = 'score') "
        + "AS SELECT category, id, title, score FROM lance.quickstart.docs");
    long tUdtf = System.nanoTime() - t0;

    sql(spark, "SHOW MATERIALIZED VIEWS IN lance.quickstart");
    show(spark, "SELECT count(*) AS good_docs FROM lance.quickstart.good_docs");
    show(spark, "SELECT id, __child_index, chunk FROM lance.quickstart.passages "
        + "WHERE id = 1 ORDER BY __child_index");
    show(spark, "SELECT category, rank, id, score FROM lance.quickstart.top_docs "
        + "ORDER BY category, rank");

    section("Change the source, refresh incrementally");
    spark.sql("INSERT INTO lance.quickstart.docs " + documents(201, 210)).collect();
    sql(spark, "UPDATE lance.quickstart.docs SET score = 10, "
        + "body = 'Rewritten body of document two, now much longer than before.' WHERE id = 2");
    sql(spark, "DELETE FROM lance.quickstart.docs WHERE id = 3");
    System.out.println("appended 10 documents, updated id 2, deleted id 3");
    // what the next refresh of the query view will do, with nothing written
    sql(spark, "EXPLAIN REFRESH MATERIALIZED VIEW lance.quickstart.good_docs");
    long[] refresh = new long[3];
    String[] views = {"good_docs", "passages", "top_docs"};
    for (int i = 0; i < views.length; i++) {
      t0 = System.nanoTime();
      sql(spark, "REFRESH MATERIALIZED VIEW lance.quickstart." + views[i]);
      refresh[i] = System.nanoTime() - t0;
    }
    show(spark, "SELECT id, title, points FROM lance.quickstart.good_docs WHERE id <= 3 "
        + "ORDER BY id");
    sql(spark, "DESCRIBE MATERIALIZED VIEW lance.quickstart.passages");

    section("Summary");
    System.out.printf("%-10s %-8s %12s %12s %10s%n", "view", "kind", "create (s)", "refresh (s)",
        "rows");
    String[] kinds = {"query", "chunker", "udtf"};
    long[] create = {tQuery, tChunker, tUdtf};
    for (int i = 0; i < views.length; i++) {
      long rows = spark.table("lance.quickstart." + views[i]).count();
      System.out.printf("%-10s %-8s %12.1f %12.1f %10d%n", views[i], kinds[i], create[i] / 1e9,
          refresh[i] / 1e9, rows);
    }
  }

  /** A VALUES clause of generated documents with ids {@code from..to}. */
  static String documents(int from, int to) {
    String[] categories = {"science", "travel", "food", "sport"};
    StringBuilder sb = new StringBuilder("VALUES ");
    for (int id = from; id <= to; id++) {
      if (id > from) {
        sb.append(", ");
      }
      String category = categories[id % categories.length];
      String body = ("Document " + id + " is about " + category + ". ").repeat(1 + id % 4);
      sb.append('(').append(id).append(", '").append(category).append("', 'doc ").append(id)
          .append("', '").append(body.trim()).append("', ").append(id * 7 % 11).append(')');
    }
    return sb.toString();
  }

  static void section(String title) {
    System.out.println();
    System.out.println("== " + title);
  }

  static void sql(SparkSession spark, String statement) {
    System.out.println("sql> " + statement);
    Dataset<Row> df = spark.sql(statement);
    if (!df.isEmpty()) {
      df.show(50, false);
    }
  }

  static void show(SparkSession spark, String query) {
    System.out.println("sql> " + query);
    spark.sql(query).show(50, false);
  }

  static VectorSchemaRoot rows(
      Schema schema, BufferAllocator allocator, long[] ids, String[] names) {
    VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
    BigIntVector id = (BigIntVector) root.getVector("id");
    VarCharVector name = (VarCharVector) root.getVector("name");
    for (int i = 0; i < ids.length; i++) {
      id.setSafe(i, ids[i]);
      name.setSafe(i, names[i].getBytes(StandardCharsets.UTF_8));
    }
    root.setRowCount(ids.length);
    return root;
  }

  /** Marks a folder the quickstart made, which a later run may empty. */
  static final String MARKER = ".quickstart-warehouse";

  /**
   * Empties {@code dir} for a new run. A folder given with {@code --warehouse} is emptied only
   * when it is new, empty, or one a quickstart made: {@code --warehouse .} must not delete a
   * checkout.
   */
  static void resetWarehouse(Path dir, boolean given) throws Exception {
    if (given && java.nio.file.Files.isDirectory(dir)
        && !java.nio.file.Files.exists(dir.resolve(MARKER))) {
      try (java.util.stream.Stream<Path> entries = java.nio.file.Files.list(dir)) {
        if (entries.findAny().isPresent()) {
          throw new IllegalArgumentException("Quickstart: --warehouse " + dir + " is not empty "
              + "and was not made by the quickstart (no " + MARKER + " in it), so it is not "
              + "deleted; give a new or empty folder");
        }
      }
    }
    Warehouses.reset(dir);
    java.nio.file.Files.createFile(dir.resolve(MARKER));
  }
}
