package io.lancerest.examples;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.DescribeTableRequest;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.lance.Dataset;
import org.lance.namespace.RestAdapter;

/**
 * Time travel through the catalog: {@code VERSION AS OF n}, {@code VERSION AS OF 'tag'} and
 * {@code TIMESTAMP AS OF '...'}, and the DataFrame read option {@code versionAsOf}.
 *
 * <p>Tags are Lance dataset tags. A server that implements CreateTableTag creates them over REST
 * ({@code LanceRestClient.createTableTag}); the upstream dir server does not, so this example
 * tags the dataset with lance-core's {@code Dataset.tags().create(name, version)} at the location
 * DescribeTable returns. Either way the catalog resolves {@code VERSION AS OF 'name'} from the
 * dataset's tags.
 *
 * <p>Usage: {@code TimeTravelExample} (embedded server on
 * {@code target/examples-warehouse/time-travel}, reset on every run).
 */
public final class TimeTravelExample {
  private TimeTravelExample() {}

  public static void main(String[] args) throws Exception {
    Path root = Path.of("target/examples-warehouse/time-travel").toAbsolutePath();
    Quickstart.resetWarehouse(root, false);
    RestAdapter server = new RestAdapter("dir", Map.of("root", root.toString()), "127.0.0.1", 0);
    server.start();
    String uri = "http://127.0.0.1:" + server.getPort();
    SparkSession spark = ExampleSpark.session("time-travel-example", uri);
    try (LanceRestClient client = LanceRestClient.create(Map.of("uri", uri))) {
      run(spark, client);
    } finally {
      spark.stop();
      server.close();
    }
  }

  static void run(SparkSession spark, LanceRestClient client) throws InterruptedException {
    Quickstart.sql(spark, "CREATE NAMESPACE lance.tt");
    Quickstart.sql(spark, "CREATE TABLE lance.tt.prices (sku STRING, price DOUBLE)");
    Quickstart.sql(spark, "INSERT INTO lance.tt.prices VALUES ('apple', 1.0), ('pear', 2.0)");
    long v1 = version(client);
    // Timestamps are resolved to the latest version committed at or before them, in the
    // session time zone; wait so that the next commit is clearly later.
    Thread.sleep(1100);
    String between = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss")
        .withZone(ZoneId.of(spark.conf().get("spark.sql.session.timeZone")))
        .format(Instant.now());
    Thread.sleep(1100);
    Quickstart.sql(spark, "UPDATE lance.tt.prices SET price = price * 1.5");
    Quickstart.sql(spark, "INSERT INTO lance.tt.prices VALUES ('plum', 3.0)");
    long latest = version(client);
    System.out.println("version after the first insert: " + v1 + ", latest: " + latest);

    String location = client.describeTable(new DescribeTableRequest().id(List.of("tt", "prices")))
        .getLocation();
    try (Dataset ds = Dataset.open(location)) {
      ds.tags().create("launch_prices", v1);
    }
    System.out.println("tagged version " + v1 + " as 'launch_prices'");

    Quickstart.show(spark, "SELECT * FROM lance.tt.prices ORDER BY sku");
    Quickstart.show(spark, "SELECT * FROM lance.tt.prices VERSION AS OF " + v1 + " ORDER BY sku");
    Quickstart.show(spark, "SELECT * FROM lance.tt.prices VERSION AS OF 'launch_prices' "
        + "ORDER BY sku");
    Quickstart.show(spark, "SELECT * FROM lance.tt.prices TIMESTAMP AS OF '" + between
        + "' ORDER BY sku");
    // The DataFrame form: read options, resolved when Spark builds the scan.
    System.out.println("df> spark.read().option(\"versionAsOf\", " + v1
        + ").table(\"lance.tt.prices\")");
    spark.read().option("versionAsOf", v1).table("lance.tt.prices").orderBy("sku")
        .show(50, false);
    try {
      spark.sql("SELECT * FROM lance.tt.prices VERSION AS OF 'no_such_tag'").collect();
    } catch (RuntimeException e) {
      System.out.println("unknown tag: " + e.getMessage());
    }
  }

  private static long version(LanceRestClient client) {
    // The dir server returns the version only with load_detailed_metadata.
    return client.describeTable(new DescribeTableRequest().id(List.of("tt", "prices"))
        .loadDetailedMetadata(true)).getVersion();
  }
}
