package io.lancerest.spark.mv.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lancerest.client.LanceJson;
import io.lancerest.client.arrow.ArrowIpc;
import io.lancerest.client.model.CreateMaterializedViewRequest;
import io.lancerest.spark.mv.TestSpark;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.testing.ChildJvm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.namespace.RestAdapter;

/**
 * The service killed mid-refresh (a child JVM, killed while its first refresh writes): after a
 * restart its job is FAILED, driver lost, and the view is as it was (empty: the refresh's single
 * commit never happened).
 */
@Tag("slow")
class ServiceKilledMidRefreshTest {
  private static final OkHttpClient HTTP = new OkHttpClient.Builder()
      .readTimeout(60, TimeUnit.SECONDS).build();
  @TempDir Path dir;

  private static JsonNode post(String url, String json) throws IOException {
    try (Response r = HTTP.newCall(new Request.Builder().url(url).post(RequestBody.create(
        json.getBytes(StandardCharsets.UTF_8), MediaType.get("application/json"))).build())
        .execute()) {
      String body = r.body() == null ? "" : r.body().string();
      JsonNode n = LanceJson.mapper().readTree(body.isEmpty() ? "{}" : body);
      ((com.fasterxml.jackson.databind.node.ObjectNode) n).put("_status", r.code());
      return n;
    }
  }

  private static void awaitFile(Path p, ChildJvm child, String what) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (!Files.exists(p) && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    if (!Files.exists(p)) {
      throw new AssertionError(what + " within 120 s; the child's output:\n"
          + child.await(Duration.ZERO).output());
    }
  }

  @Test
  void afterARestartTheKilledServicesJobIsFailedAndTheViewIsAsItWas() throws Exception {
    RestAdapter upstream = new RestAdapter("dir", Map.of("root", dir.resolve("w").toString()),
        "127.0.0.1", 0);
    upstream.start();
    String uri = "http://127.0.0.1:" + upstream.getPort();
    SparkSession user = TestSpark.newSession();
    user.conf().set("spark.sql.catalog.lance", "io.lancerest.spark.catalog.LanceRestCatalog");
    user.conf().set("spark.sql.catalog.lance.uri", uri);
    try {
      user.sql("CREATE NAMESPACE lance.k").collect();
      user.sql("CREATE TABLE lance.k.src (id BIGINT, doc STRING)").collect();
      user.sql("INSERT INTO lance.k.src SELECT id, concat('d', id) FROM range(30)").collect();

      Path port = dir.resolve("port");
      Path marker = dir.resolve("marker");
      String jobId;
      try (ChildJvm child = ChildJvm.start("the view service", ChildServiceMain.class,
          List.of("-Xmx1g"), uri, port.toString(), marker.toString())) {
        awaitFile(port, child, "the child service did not listen");
        String base = "http://127.0.0.1:" + Files.readString(port).trim();
        SourceQuery q = SourceQuery.of(List.of("k", "src"), List.of("k"), List.of(
            new SourceQuery.OutputColumn("id", "id"),
            new SourceQuery.OutputColumn("doc", "svc_stall(doc)")), null, null);
        Schema out = new Schema(List.of(
            new Field("id", FieldType.nullable(new ArrowType.Int(64, true)), null),
            new Field("doc", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));
        String body = LanceJson.mapper().writeValueAsString(new CreateMaterializedViewRequest()
            .id(List.of("k", "v")).kind(CreateMaterializedViewRequest.KindEnum.QUERY)
            .sourceQuery(q.toJson())
            .outputSchema(Base64.getEncoder().encodeToString(ArrowIpc.toStream(out, List.of())))
            .withNoData(false));
        JsonNode created = post(base + "/v1/materialized_view/k$v/create", body);
        assertEquals(201, created.path("_status").asInt(), created.toString());
        jobId = created.path("job_id").asText();
        awaitFile(marker, child, "the refresh did not reach the middle of its write");
      } // killed here, mid-refresh

      SparkSession restarted = TestSpark.newSession();
      restarted.conf().set("spark.lancerest.mv.jobs.heartbeatTimeout", "2s");
      try (MaterializedViewServer again = MaterializedViewServer.start(restarted,
          ServerConfig.parse(new String[] {"--upstream", uri, "--port", "0",
              "--auto-refresh", "false"}))) {
        String base = "http://127.0.0.1:" + again.port();
        JsonNode job = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
          job = post(base + "/v1/materialized_view/k$v/job/describe",
              "{\"job_id\":\"" + jobId + "\"}");
          if ("FAILED".equals(job.path("status").asText())) {
            break;
          }
          Thread.sleep(250);
        }
        assertEquals("FAILED", job.path("status").asText(), String.valueOf(job));
        assertTrue(job.path("message").asText().startsWith("driver lost"), job.toString());
      }
      SparkSession.setActiveSession(user);
      assertEquals(0, user.sql("SELECT * FROM lance.k.v").count(), "the killed refresh "
          + "committed rows");
    } finally {
      upstream.close();
    }
  }
}
