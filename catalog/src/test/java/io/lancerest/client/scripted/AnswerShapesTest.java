package io.lancerest.client.scripted;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.arrow.ArrowBatches;
import io.lancerest.client.arrow.ArrowIpc;
import io.lancerest.client.error.InvalidResponseException;
import io.lancerest.client.model.AnalyzeTableQueryPlanRequest;
import io.lancerest.client.model.CountTableRowsRequest;
import io.lancerest.client.model.CreateMaterializedViewRequest;
import io.lancerest.client.model.CreateMaterializedViewResponse;
import io.lancerest.client.model.ExplainTableQueryPlanRequest;
import io.lancerest.client.model.QueryTableRequest;
import io.lancerest.client.model.RefreshMaterializedViewRequest;
import io.lancerest.client.model.UpdateTableSchemaMetadataRequest;
import io.lancerest.client.model.UpdateTableSchemaMetadataResponse;
import java.io.ByteArrayOutputStream;
import java.nio.channels.Channels;
import java.util.List;
import java.util.Map;
import okhttp3.mockwebserver.MockResponse;
import okhttp3.mockwebserver.RecordedRequest;
import okio.Buffer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Answers whose shape the real server does not produce, or not all of: Arrow IPC file and
 * stream answers to QueryTable, the row-count shapes, empty 201/202/204 bodies, the bare maps of
 * UpdateTableSchemaMetadata and plain-text plans.
 */
class AnswerShapesTest extends ScriptedServerTest {
  private static final List<String> T = List.of("ns", "t");
  private final BufferAllocator allocator = new RootAllocator();

  @AfterAll
  void closeAllocator() {
    allocator.close();
  }

  private static MockResponse bytes(int status, byte[] body, String type) {
    return new MockResponse().setResponseCode(status).setHeader("Content-Type", type)
        .setBody(new Buffer().write(body));
  }

  /** Two rows (1, "a") and (2, null), in the IPC file format or the stream format. */
  private byte[] twoRows(boolean fileFormat) throws Exception {
    Schema schema = new Schema(List.of(Field.nullable("id", new ArrowType.Int(32, true)),
        Field.nullable("name", ArrowType.Utf8.INSTANCE)));
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
      IntVector id = (IntVector) root.getVector("id");
      VarCharVector name = (VarCharVector) root.getVector("name");
      id.setSafe(0, 1);
      id.setSafe(1, 2);
      name.setSafe(0, "a".getBytes());
      name.setNull(1);
      root.setRowCount(2);
      if (!fileFormat) {
        return ArrowIpc.toStream(root);
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      try (ArrowFileWriter w = new ArrowFileWriter(root, null, Channels.newChannel(out))) {
        w.start();
        w.writeBatch();
        w.end();
      }
      return out.toByteArray();
    }
  }

  @ParameterizedTest(name = "file format: {0}")
  @ValueSource(booleans = {true, false})
  void queryAnswerInEitherIpcFormatDecodesToRows(boolean fileFormat) throws Exception {
    enqueue(bytes(200, twoRows(fileFormat), "application/vnd.apache.arrow.file"));
    LanceRestClient c = client();

    try (ArrowBatches b = c.queryTable(new QueryTableRequest().id(T).k(2L), allocator)) {
      assertEquals(2, b.rowCount());
      assertEquals(List.of(1, 2), b.column("id"));
      assertEquals("a", String.valueOf(b.column("name").get(0)));
      assertNull(b.column("name").get(1));
    }
    assertEquals("/v1/table/ns%24t/query", next().getRequestUrl().encodedPath());
  }

  @Test
  void queryAnswerThatIsNotArrowIsAnInvalidResponse() {
    enqueue(ok("{\"rows\":[]}"));

    InvalidResponseException e = assertThrows(InvalidResponseException.class,
        () -> client().queryTable(new QueryTableRequest().id(T).k(2L), allocator));

    assertTrue(e.getMessage().startsWith("QueryTable 'ns.t': the server answered HTTP 200 with "
        + "a body that is not a valid QueryTable response (not an Arrow IPC file or stream"),
        e.getMessage());
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"42", "{\"count\": 42}", "\"42\"", "{\"count\": \"42\"}"})
  void rowCountIsReadFromEveryShape(String body) {
    enqueue(ok(body));
    assertEquals(42L, client().countTableRows(new CountTableRowsRequest().id(T)));
  }

  @Test
  void fractionalRowCountIsAnInvalidResponse() {
    enqueue(ok("{\"count\": 4.5}"));
    InvalidResponseException e = assertThrows(InvalidResponseException.class,
        () -> client().countTableRows(new CountTableRowsRequest().id(T)));
    assertTrue(e.getMessage().contains("(expected an integer row count, got NUMBER)"),
        e.getMessage());
  }

  @Test
  void createMaterializedViewAcceptsAnEmpty201() throws Exception {
    enqueue(new MockResponse().setResponseCode(201).setHeader("x-request-id", "r1"));

    CreateMaterializedViewResponse r = client().createMaterializedView(
        new CreateMaterializedViewRequest().id(T).kind(CreateMaterializedViewRequest.KindEnum.QUERY)
            .sourceQuery("{}"));

    assertNull(r.getVersion());
    assertNull(r.getJobId());
    assertEquals("r1", r.getContext().get("header.x-request-id"));
    assertEquals("POST", next().getMethod());
  }

  @Test
  void refreshMaterializedViewReads202WithJobId() {
    enqueue(json(202, "{\"job_id\":\"job-7\"}"));
    assertEquals("job-7", client().refreshMaterializedView(
        new RefreshMaterializedViewRequest().id(T)).getJobId());
  }

  @Test
  void existsChecksAccept204WithoutBody() throws Exception {
    enqueue(new MockResponse().setResponseCode(204), new MockResponse().setResponseCode(204));
    LanceRestClient c = client();

    assertTrue(c.namespaceExists(List.of("ns")));
    assertTrue(c.tableExists(T));
    assertEquals("/v1/namespace/ns/exists", next().getRequestUrl().encodedPath());
    assertEquals("/v1/table/ns%24t/exists", next().getRequestUrl().encodedPath());
  }

  @Test
  void schemaMetadataTravelsAsABareMapBothWays() throws Exception {
    enqueue(ok("{\"owner\":\"ana\",\"tier\":\"gold\"}"));

    UpdateTableSchemaMetadataResponse r = client().updateTableSchemaMetadata(
        new UpdateTableSchemaMetadataRequest().id(T).branch("dev")
            .metadata(Map.of("owner", "ana")));

    RecordedRequest sent = next();
    assertEquals("{\"owner\":\"ana\"}", sent.getBody().readUtf8());
    assertEquals("dev", sent.getRequestUrl().queryParameter("branch"));
    assertEquals(Map.of("owner", "ana", "tier", "gold"), r.getMetadata());
    assertNull(r.getTransactionId());
  }

  @Test
  void schemaMetadataAnswerInTheSchemaShapeIsReadToo() {
    enqueue(ok("{\"metadata\":{\"owner\":\"ana\"},\"transaction_id\":\"tx1\"}"));

    UpdateTableSchemaMetadataResponse r = client().updateTableSchemaMetadata(
        new UpdateTableSchemaMetadataRequest().id(T).metadata(Map.of("owner", "ana")));

    assertEquals(Map.of("owner", "ana"), r.getMetadata());
    assertEquals("tx1", r.getTransactionId());
  }

  @Test
  void plansAreReadAsPlainTextJsonStringOrObject() {
    String plan = "ProjectionExec: expr=[id]\n  LanceScan: uri=/t.lance";
    enqueue(new MockResponse().setHeader("Content-Type", "text/plain").setBody(plan),
        ok("\"ProjectionExec: expr=[id]\\n  LanceScan: uri=/t.lance\""),
        ok("{\"analysis\":\"" + "ProjectionExec: expr=[id]\\n  LanceScan: uri=/t.lance\"}"));
    LanceRestClient c = client();
    QueryTableRequest q = new QueryTableRequest().id(T).k(1L);

    assertEquals(plan, c.explainTableQueryPlan(
        new ExplainTableQueryPlanRequest().id(T).query(q)));
    assertEquals(plan, c.explainTableQueryPlan(
        new ExplainTableQueryPlanRequest().id(T).query(q)));
    assertEquals(plan, c.analyzeTableQueryPlan(new AnalyzeTableQueryPlanRequest().id(T).k(1L)));
  }
}
