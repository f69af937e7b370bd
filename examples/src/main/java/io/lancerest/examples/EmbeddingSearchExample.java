package io.lancerest.examples;

import io.lancerest.embeddings.MiniLmEmbedding;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.lance.namespace.RestAdapter;

/**
 * A computed embedding column, end to end: a table of passages gets a column that the shipped
 * text embedding ({@code io.lancerest.embeddings.MiniLmEmbedding}, from the optional {@code
 * embeddings} module) computes; a backfill fills it; after an insert and an update a second
 * backfill computes only those rows; a vector index is built on the column and searched with
 * {@code vector_search}, the query embedded by the same function.
 *
 * <p>Usage: {@code EmbeddingSearchExample} (embedded server on {@code
 * target/examples-warehouse/embeddings}, reset on every run). The model runs offline, inside
 * the executors; in a deployment the embeddings module's jars go next to the bundle ({@code
 * docs/embeddings.md}).
 */
public final class EmbeddingSearchExample {
  private static final String T = "lance.emb.passages";

  private EmbeddingSearchExample() {}

  public static void main(String[] args) throws Exception {
    Path root = Path.of("target/examples-warehouse/embeddings").toAbsolutePath();
    Quickstart.resetWarehouse(root, false);
    RestAdapter server = new RestAdapter("dir", Map.of("root", root.toString()), "127.0.0.1", 0);
    server.start();
    SparkSession spark = ExampleSpark.session("embedding-search-example",
        "http://127.0.0.1:" + server.getPort());
    try {
      run(spark);
    } finally {
      spark.stop();
      server.close();
    }
  }

  static void run(SparkSession spark) throws Exception {
    Quickstart.section("a table of passages");
    Quickstart.sql(spark, "CREATE NAMESPACE lance.emb");
    Quickstart.sql(spark, "CREATE TABLE " + T + " (id BIGINT, text STRING)");
    Quickstart.sql(spark, "INSERT INTO " + T + " VALUES "
        + "(1, 'Tomatoes need full sun and regular watering.'), "
        + "(2, 'Basil grows well next to tomatoes in a warm garden.'), "
        + "(3, 'Knead the bread dough for ten minutes, then let it rise.'), "
        + "(4, 'A sourdough starter needs flour and water every day.'), "
        + "(5, 'The train to the airport leaves every fifteen minutes.'), "
        + "(6, 'Book a window seat for the long flight.'), "
        + "(7, 'Interest rates rose again this quarter.'), "
        + "(8, 'The central bank kept inflation in check.')");

    Quickstart.section("a computed column: the embedding of text, filled by a backfill");
    Quickstart.sql(spark, "ALTER TABLE " + T + " ADD COLUMN emb COMPUTED BY "
        + "'io.lancerest.embeddings.MiniLmEmbedding' (text)");
    Quickstart.sql(spark, "ALTER TABLE " + T + " BACKFILL COLUMN emb");
    Quickstart.show(spark, "SELECT id, size(emb) AS dims, slice(emb, 1, 3) AS first_values "
        + "FROM " + T + " ORDER BY id");

    Quickstart.section("two new passages and an edited one: the next backfill computes those 3");
    // Spark 3.5 wants a value for every column in an INSERT: NULL for the computed one
    Quickstart.sql(spark, "INSERT INTO " + T + " VALUES "
        + "(9, 'Pizza dough rests overnight in the fridge.', NULL), "
        + "(10, 'Pack a passport and a charger for the trip.', NULL)");
    Quickstart.sql(spark, "UPDATE " + T + " SET text = 'Water tomato plants early in the "
        + "morning.' WHERE id = 1");
    Quickstart.sql(spark, "ALTER TABLE " + T + " BACKFILL COLUMN emb");

    Quickstart.section("a vector index on the column, searched with a query embedded the same way");
    Quickstart.sql(spark, "ALTER TABLE " + T + " CREATE INDEX emb_idx USING ivf_flat (emb) "
        + "WITH (num_partitions = 2)");
    for (String question : List.of("how do I bake bread", "what to take on a journey")) {
      String query = "SELECT id, text, round(_distance, 3) AS distance FROM vector_search('" + T
          + "', 'emb', %s, 3)";
      System.out.println("sql> " + String.format(query, "array(<the 384 values of the "
          + "embedding of '" + question + "'>)"));
      spark.sql(String.format(query, arrayLiteral(embed(question)))).show(false);
    }
  }

  /** The query's vector, by the column's own function (normalized, as the column's are). */
  private static float[] embed(String text) throws Exception {
    try (MiniLmEmbedding f = new MiniLmEmbedding()) {
      f.open(Map.of());
      return (float[]) f.compute(List.of(RowFactory.create(text))).get(0);
    }
  }

  private static String arrayLiteral(float[] v) {
    return IntStream.range(0, v.length).mapToObj(i -> Float.toString(v[i]))
        .collect(Collectors.joining(", ", "array(", ")"));
  }
}
