package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lancerest.client.arrow.ArrowBatches;
import io.lancerest.client.arrow.ArrowIpc;
import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.definition.SourceQuery;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.mockwebserver.Dispatcher;
import okhttp3.mockwebserver.MockResponse;
import okhttp3.mockwebserver.MockWebServer;
import okhttp3.mockwebserver.RecordedRequest;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Server-managed mode: a scripted server that implements CreateMaterializedView and
 * RefreshMaterializedView, and forwards every other request to the real directory server (so
 * the source table resolves as usual). Asserts the exact wire bodies.
 */
class ServerManagedViewTest {
  static EngineFixture f;
  static MockWebServer mv;
  static final List<String[]> CALLS = new CopyOnWriteArrayList<>();
  static final ObjectMapper JSON = new ObjectMapper();

  @BeforeAll
  static void start() throws IOException {
    // The fixture's catalog "lance" talks to the directory server; "lance_mv" to the script.
    f = new EngineFixture(Map.of());
    mv = new MockWebServer();
    OkHttpClient http = new OkHttpClient();
    mv.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest r) {
        String path = r.getPath();
        String body = r.getBody().readUtf8();
        if (path.startsWith("/v1/materialized_view/")) {
          CALLS.add(new String[] {path, body});
          return path.contains("/create")
              ? new MockResponse().setResponseCode(201)
                  .setBody("{\"version\": 1, \"job_id\": \"srv-create-1\"}")
              : new MockResponse().setResponseCode(202).setBody("{\"job_id\": \"srv-job-7\"}");
        }
        Request.Builder fwd = new Request.Builder().url(f.uri + path);
        r.getHeaders().forEach(h -> {
          if (!h.getFirst().equalsIgnoreCase("Host")
              && !h.getFirst().equalsIgnoreCase("Content-Length")) {
            fwd.header(h.getFirst(), h.getSecond());
          }
        });
        fwd.method(r.getMethod(), r.getMethod().equals("GET") ? null
            : RequestBody.create(body.getBytes(StandardCharsets.UTF_8)));
        try (Response resp = http.newCall(fwd.build()).execute()) {
          return new MockResponse().setResponseCode(resp.code())
              .setBody(resp.body() == null ? "" : resp.body().string())
              .setHeader("Content-Type", "application/json");
        } catch (IOException e) {
          return new MockResponse().setResponseCode(502).setBody(e.toString());
        }
      }
    });
    mv.start();
    f.spark.conf().set("spark.sql.catalog.lance_mv", "io.lancerest.spark.catalog.LanceRestCatalog");
    f.spark.conf().set("spark.sql.catalog.lance_mv.uri", mv.url("/").toString());
  }

  @AfterAll
  static void stop() throws IOException {
    mv.shutdown();
    f.close();
  }

  @Test
  void createAndRefreshUseTheServerEndpointsWithSpecBodies() throws Exception {
    String ns = f.namespace("srv");
    f.sql("CREATE TABLE lance." + ns + ".src (id BIGINT, name STRING, score INT)");
    f.sql("INSERT INTO lance." + ns + ".src VALUES (1, 'a b', 10), (2, 'c', 3)");
    CALLS.clear();

    Row created = f.sql("CREATE MATERIALIZED VIEW lance_mv." + ns + ".v AS SELECT s.id, "
        + "upper(s.name) AS uname FROM lance_mv." + ns + ".src s WHERE s.score > 5").get(0);
    assertEquals("srv-create-1", created.getString(0));
    assertEquals("SUBMITTED", created.getString(1));
    assertEquals("query", created.getString(2));
    assertTrue(created.isNullAt(3));
    assertEquals(1, CALLS.size());
    assertEquals("/v1/materialized_view/" + ns + "%24v/create?delimiter=%24", CALLS.get(0)[0]);
    JsonNode body = JSON.readTree(CALLS.get(0)[1]);
    assertEquals("query", body.get("kind").asText());
    assertFalse(body.get("with_no_data").asBoolean());
    assertFalse(body.get("auto_refresh").asBoolean());
    assertFalse(body.has("udtf_spec"));
    SourceQuery q = SourceQuery.fromJson(body.get("source_query").asText());
    assertEquals(List.of(ns, "src"), q.sourceTableId());
    assertEquals(List.of(ns), q.sourceNamespace());
    assertEquals(List.of(new SourceQuery.OutputColumn("id", "id"),
        new SourceQuery.OutputColumn("uname", "upper(name)")), q.projection());
    assertEquals("(score > 5)", q.filter());
    assertNull(q.limit());
    Schema out = decodeSchema(body.get("output_schema").asText());
    assertEquals(List.of("__source_row_id", "__is_set", "id", "uname"),
        out.getFields().stream().map(Field::getName).toList());
    assertFalse(out.getFields().get(0).isNullable());
    assertEquals("Int(64, true)", out.getFields().get(0).getType().toString());
    assertEquals("Bool", out.getFields().get(1).getType().toString());
    assertEquals("Utf8", out.getFields().get(3).getType().toString());

    CALLS.clear();
    Row refreshed = f.sql("REFRESH MATERIALIZED VIEW lance_mv." + ns + ".v WITH (src_version = "
        + "2, concurrency = 4, max_rows_per_fragment = 1000)").get(0);
    assertEquals("srv-job-7", refreshed.getString(0));
    assertEquals("SUBMITTED", refreshed.getString(1));
    assertEquals(1, CALLS.size());
    assertEquals("/v1/materialized_view/" + ns + "%24v/refresh?delimiter=%24", CALLS.get(0)[0]);
    JsonNode rb = JSON.readTree(CALLS.get(0)[1]);
    assertEquals(2, rb.get("src_version").asInt());
    assertEquals(4, rb.get("concurrency").asInt());
    assertEquals(1000, rb.get("max_rows_per_fragment").asInt());
    assertFalse(rb.has("output_limit"));
  }

  @Test
  void chunkerCreateCarriesTheEnvelopeAndItsSha() throws Exception {
    String ns = f.namespace("srvc");
    f.sql("CREATE TABLE lance." + ns + ".docs (id BIGINT, body STRING)");
    f.sql("INSERT INTO lance." + ns + ".docs VALUES (1, 'hello world')");
    CALLS.clear();
    List<Row> rows = f.sql("CREATE MATERIALIZED VIEW lance_mv." + ns + ".p USING CHUNKER "
        + "'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS (input_columns = 'body', "
        + "chunk_size = 4, overlap = 1, num_cpus = 2, auto_refresh = true) AS SELECT id, body "
        + "FROM lance_mv." + ns + ".docs WITH NO DATA");
    assertTrue(rows.isEmpty());
    JsonNode body = JSON.readTree(CALLS.get(0)[1]);
    assertEquals("chunker", body.get("kind").asText());
    assertTrue(body.get("with_no_data").asBoolean());
    assertTrue(body.get("auto_refresh").asBoolean());
    JsonNode spec = body.get("udtf_spec");
    assertEquals("chunker", spec.get("kind").asText());
    byte[] envelope = Base64.getDecoder().decode(spec.get("udtf").asText());
    assertEquals(FunctionEnvelope.sha256Hex(envelope), spec.get("udtf_sha").asText());
    FunctionEnvelope env = FunctionEnvelope.decode(spec.get("udtf").asText(),
        spec.get("udtf_sha").asText());
    assertEquals("io.lancerest.spark.mv.chunker.TextSplitter", env.className());
    assertEquals("TextSplitter", spec.get("udtf_name").asText());
    assertEquals("1", spec.get("udtf_version").asText());
    assertEquals(List.of("body"), env.inputColumns());
    assertEquals(Map.of("chunk_size", "4", "overlap", "1"), env.options());
    assertEquals(2.0, spec.get("num_cpus").asDouble());
    assertFalse(spec.get("batch").asBoolean());
    Schema out = decodeSchema(body.get("output_schema").asText());
    assertEquals(List.of("__source_row_id", "__child_index", "id", "chunk", "char_offset"),
        out.getFields().stream().map(Field::getName).toList());
  }

  private static Schema decodeSchema(String base64) throws IOException {
    try (RootAllocator a = new RootAllocator();
        ArrowBatches b = ArrowIpc.read(Base64.getDecoder().decode(base64), a)) {
      assertEquals(0, b.batches().size());
      return b.schema();
    }
  }
}
