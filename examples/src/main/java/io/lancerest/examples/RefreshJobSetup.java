package io.lancerest.examples;

import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * Prepares a server for the {@code spark-submit} refresh job (examples/README.md): namespace
 * {@code demo}, source table {@code demo.orders} and a query view {@code demo.big_orders} created
 * {@code WITH NO DATA}, so that the first {@code RefreshJob} run fills it. With {@code --append}
 * it adds orders to an existing setup instead, for an incremental refresh. Without it, a namespace
 * {@code demo} an earlier run left is dropped first, so that it can be run again.
 *
 * <p>Usage: {@code RefreshJobSetup [--uri URL] [--append]} (default uri http://127.0.0.1:2333,
 * the dev server's).
 */
public final class RefreshJobSetup {
  private RefreshJobSetup() {}

  public static void main(String[] args) throws Exception {
    String uri = "http://127.0.0.1:2333";
    boolean append = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--uri" -> uri = args[++i];
        case "--append" -> append = true;
        default -> throw new IllegalArgumentException("unknown option " + args[i]
            + "; usage: RefreshJobSetup [--uri URL] [--append]");
      }
    }
    SparkSession spark = ExampleSpark.session("refresh-job-setup", uri);
    try {
      if (append) {
        Quickstart.sql(spark, "INSERT INTO lance.demo.orders VALUES "
            + "(6, 'eve', 420.0), (7, 'frank', 12.5)");
      } else {
        // a second run starts again from the same state: what an earlier run made goes first
        Quickstart.sql(spark, "DROP NAMESPACE IF EXISTS lance.demo CASCADE");
        Quickstart.sql(spark, "CREATE NAMESPACE lance.demo");
        Quickstart.sql(spark, "CREATE TABLE lance.demo.orders (id BIGINT, customer STRING, "
            + "amount DOUBLE)");
        Quickstart.sql(spark, "INSERT INTO lance.demo.orders VALUES (1, 'ann', 120.0), "
            + "(2, 'bob', 35.0), (3, 'cid', 260.0), (4, 'dee', 99.0), (5, 'ann', 150.0)");
        Quickstart.sql(spark, "CREATE MATERIALIZED VIEW lance.demo.big_orders AS "
            + "SELECT id, customer, amount FROM lance.demo.orders WHERE amount >= 100 "
            + "WITH NO DATA");
      }
      Quickstart.show(spark, "SELECT * FROM lance.demo.big_orders ORDER BY id");
    } finally {
      spark.stop();
    }
  }
}
