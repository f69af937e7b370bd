package io.lancerest.examples;

import java.nio.file.Path;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.lance.namespace.RestAdapter;

/**
 * A user's own chunker and batch table function ({@code io.lancerest.examples.custom}), used from
 * SQL by class name. In a deployment the two classes sit in the user's jar, given to Spark with
 * {@code --jars} next to the bundle; here they are on the example's class path.
 *
 * <p>Usage: {@code CustomFunctionsExample} (embedded server on
 * {@code target/examples-warehouse/custom}, reset on every run).
 */
public final class CustomFunctionsExample {
  private CustomFunctionsExample() {}

  public static void main(String[] args) throws Exception {
    Path root = Path.of("target/examples-warehouse/custom").toAbsolutePath();
    Quickstart.resetWarehouse(root, false);
    RestAdapter server = new RestAdapter("dir", Map.of("root", root.toString()), "127.0.0.1", 0);
    server.start();
    SparkSession spark = ExampleSpark.session("custom-functions-example",
        "http://127.0.0.1:" + server.getPort());
    try {
      run(spark);
    } finally {
      spark.stop();
      server.close();
    }
  }

  static void run(SparkSession spark) {
    Quickstart.sql(spark, "CREATE NAMESPACE lance.custom");
    Quickstart.sql(spark, "CREATE TABLE lance.custom.notes (id BIGINT, topic STRING, body STRING)");
    Quickstart.sql(spark, "INSERT INTO lance.custom.notes VALUES "
        + "(1, 'garden', 'Tomatoes need sun. Water them daily! Are basil plants happy? Yes.'), "
        + "(2, 'garden', 'Basil likes warmth. Tomatoes and basil grow well together.'), "
        + "(3, 'kitchen', 'Bread needs time. Knead the bread dough well. Let dough rest.')");

    Quickstart.sql(spark, "CREATE MATERIALIZED VIEW lance.custom.sentences "
        + "USING CHUNKER 'io.lancerest.examples.custom.SentenceChunker' "
        + "OPTIONS (input_columns = 'body', min_length = '4') "
        + "AS SELECT id, body FROM lance.custom.notes");
    Quickstart.show(spark, "SELECT id, __child_index, position, sentence "
        + "FROM lance.custom.sentences ORDER BY id, __child_index");

    Quickstart.sql(spark, "CREATE MATERIALIZED VIEW lance.custom.top_words "
        + "USING UDTF 'io.lancerest.examples.custom.WordCountUdtf' PARTITION BY topic "
        + "OPTIONS (text_column = 'body', top = '3') "
        + "AS SELECT topic, body FROM lance.custom.notes");
    Quickstart.show(spark, "SELECT key, word, n FROM lance.custom.top_words ORDER BY key, n DESC, "
        + "word");

    System.out.println();
    System.out.println("== add a note, refresh both views");
    Quickstart.sql(spark, "INSERT INTO lance.custom.notes VALUES "
        + "(4, 'kitchen', 'Fresh bread tastes best. Share the bread.')");
    Quickstart.sql(spark, "REFRESH MATERIALIZED VIEW lance.custom.sentences");
    Quickstart.sql(spark, "REFRESH MATERIALIZED VIEW lance.custom.top_words");
    Quickstart.show(spark, "SELECT id, position, sentence FROM lance.custom.sentences "
        + "WHERE id = 4 ORDER BY position");
    Quickstart.show(spark, "SELECT key, word, n FROM lance.custom.top_words ORDER BY key, n DESC, "
        + "word");
    Quickstart.sql(spark, "DESCRIBE MATERIALIZED VIEW lance.custom.top_words");
  }
}
