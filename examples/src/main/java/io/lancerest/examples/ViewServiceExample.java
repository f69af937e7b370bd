package io.lancerest.examples;

import io.lancerest.client.arrow.ArrowIpc;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.server.MaterializedViewServer;
import io.lancerest.spark.mv.server.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.SparkSession;
import org.lance.namespace.RestAdapter;

/**
 * The materialized-view service, driven over HTTP only: starts the dev server (lance-core's
 * {@code RestAdapter}) and the service in front of it, then creates a query view, polls its
 * first refresh, inserts into the source and refreshes again, all with plain JSON requests, as
 * curl or any non-Spark client would send them. The source table is written with SQL in the
 * service's own session, to keep the example short.
 *
 * <pre>
 *   mvn -B -ntp -q -Pquickstart -DskipTests -pl examples -am verify \
 *       -Dquickstart.main=io.lancerest.examples.ViewServiceExample
 * </pre>
 */
public final class ViewServiceExample {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private ViewServiceExample() {}

  public static void main(String[] args) throws Exception {
    // its own folder, emptied on every run (nothing is left in the temp directory)
    Path root = Path.of("target/examples-warehouse/view-service").toAbsolutePath();
    Warehouses.reset(root);
    RestAdapter upstream = new RestAdapter("dir", Map.of("root", root.toString()), "127.0.0.1",
        0);
    upstream.start();
    String upstreamUri = "http://127.0.0.1:" + upstream.getPort();
    SparkSession spark = SparkSession.builder().appName("view-service-example")
        .master("local[2]").config("spark.ui.enabled", "false").getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    try (MaterializedViewServer service = MaterializedViewServer.start(spark,
        ServerConfig.parse(new String[] {"--upstream", upstreamUri, "--port", "0"}))) {
      String base = "http://127.0.0.1:" + service.port();
      System.out.println("service at " + base + " in front of " + upstreamUri);

      // the source: shop.orders (id, item), written with SQL through the service's catalog
      spark.sql("CREATE NAMESPACE " + MaterializedViewServer.CATALOG + ".shop");
      spark.sql("CREATE TABLE " + MaterializedViewServer.CATALOG + ".shop.orders (id BIGINT, "
          + "item STRING)");
      spark.sql("INSERT INTO " + MaterializedViewServer.CATALOG + ".shop.orders VALUES "
          + "(1, 'apple'), (2, 'pear'), (3, 'plum')");

      // CreateMaterializedView: a query view of the orders with id > 1
      // source_query is this engine's JSON (printed below: any client can send it as text)
      String sourceQuery = SourceQuery.of(List.of("shop", "orders"), List.of("shop"), List.of(
          new SourceQuery.OutputColumn("id", "id"), new SourceQuery.OutputColumn("item",
              "item")), "id > 1", null).toJson();
      System.out.println("source_query: " + sourceQuery);
      Schema orders = new Schema(List.of(
          new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
          new Field("item", FieldType.nullable(new ArrowType.Utf8()), null)));
      String outputSchema = Base64.getEncoder().encodeToString(ArrowIpc.toStream(orders,
          List.of()));
      String create = "{\"kind\":\"query\",\"source_query\":" + quoted(sourceQuery)
          + ",\"output_schema\":\"" + outputSchema + "\",\"with_no_data\":false}";
      String created = post(base + "/v1/materialized_view/shop$recent/create", create);
      System.out.println("create  -> " + created);
      String job = field(created, "job_id");
      System.out.println("job     -> " + await(base, job));

      // new rows in the source, then RefreshMaterializedView
      spark.sql("INSERT INTO " + MaterializedViewServer.CATALOG + ".shop.orders VALUES "
          + "(4, 'fig')");
      String refreshed = post(base + "/v1/materialized_view/shop$recent/refresh", "{}");
      System.out.println("refresh -> " + refreshed);
      System.out.println("job     -> " + await(base, field(refreshed, "job_id")));
      System.out.println("jobs    -> " + post(base + "/v1/materialized_view/shop$recent/job/list",
          "{\"limit\":10}"));
      System.out.println("view rows: " + spark.sql("SELECT id, item FROM mv_service.shop.recent"
          + " ORDER BY id").collectAsList());
    } finally {
      spark.stop();
      upstream.close();
    }
  }

  /** Polls job/describe until the job has ended (at most two minutes). */
  private static String await(String base, String jobId) throws Exception {
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    String last = null;
    while (System.nanoTime() < deadline) {
      last = post(base + "/v1/materialized_view/shop$recent/job/describe",
          "{\"job_id\":\"" + jobId + "\"}");
      String status = field(last, "status");
      if (!status.equals("SUBMITTED") && !status.equals("RUNNING")) {
        return status + " " + last;
      }
      Thread.sleep(250);
    }
    throw new IllegalStateException("job " + jobId + " did not end within 2 minutes: " + last);
  }

  private static String post(String url, String json) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url.replace("$",
            "%24"))).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json)).build(),
        HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() / 100 != 2) {
      throw new IllegalStateException(url + " answered " + r.statusCode() + ": " + r.body());
    }
    return r.statusCode() + " " + r.body();
  }

  private static String field(String answer, String name) throws Exception {
    String json = answer.substring(answer.indexOf(' ') + 1);
    return io.lancerest.client.LanceJson.mapper().readTree(json).path(name).asText();
  }

  private static String quoted(String s) throws Exception {
    return io.lancerest.client.LanceJson.mapper().writeValueAsString(s);
  }
}
