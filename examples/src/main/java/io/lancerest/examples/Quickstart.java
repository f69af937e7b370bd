package io.lancerest.examples;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.CreateNamespaceRequest;
import io.lancerest.client.model.CreateTableRequest;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DescribeTableResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
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
 * <p>Usage: {@code Quickstart [--warehouse DIR]} (default {@code ./target/quickstart-warehouse}).
 */
public final class Quickstart {
  private Quickstart() {}

  public static void main(String[] args) throws Exception {
    Path warehouse = Path.of(args.length >= 2 && args[0].equals("--warehouse")
        ? args[1] : "target/quickstart-warehouse").toAbsolutePath();
    resetWarehouse(warehouse);
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
          .getOrCreate();
      spark.sparkContext().setLogLevel("WARN");
      sparkSqlTour(spark);
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
    client.createNamespace(new CreateNamespaceRequest(ns, null, Map.of("owner", "quickstart")));
    System.out.println("created namespace " + ns);

    Schema schema = new Schema(List.of(
        new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
        new Field("name", FieldType.nullable(new ArrowType.Utf8()), null)));
    try (VectorSchemaRoot first = rows(schema, allocator, new long[] {1, 2, 3},
        new String[] {"Lisbon", "Oslo", "Kyoto"})) {
      client.createTable(CreateTableRequest.builder(table).build(), first);
    }
    DescribeTableResponse d = client.describeTable(
        DescribeTableRequest.of(table).withLoadDetailedMetadata(true));
    System.out.println("created table " + table + " with 3 rows at version " + d.version()
        + ", location " + d.location());
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

  static void resetWarehouse(Path dir) throws Exception {
    if (Files.exists(dir)) {
      try (Stream<Path> walk = Files.walk(dir)) {
        walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    Files.createDirectories(dir);
  }
}
