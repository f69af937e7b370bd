package io.lancerest.spark.mv.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lancerest.client.LanceJson;
import io.lancerest.client.arrow.ArrowIpc;
import io.lancerest.client.error.ForbiddenException;
import io.lancerest.client.model.CreateMaterializedViewRequest;
import io.lancerest.spark.mv.TestSpark;
import io.lancerest.spark.mv.chunker.TextSplitter;
import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.definition.FunctionSpec;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.engine.CatalogBinding;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.layout.GenevaLayout;
import io.lancerest.spark.mv.sql.PrintCreateRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.lance.ReadOptions;
import org.lance.namespace.RestAdapter;

/**
 * The service end to end over HTTP: the directory server behind a token gate (the upstream),
 * the service in front with its own token, and callers with and without rights.
 */
class MaterializedViewServerTest {
  static final String SERVICE_TOKEN = "svc-secret-token-1";
  static final String ALICE = "alice-secret-token-2";
  static final String BOB = "bob-secret-token-3";
  /** May use namespace {@value #CAROLS} only (not the job log's {@code __system}). */
  static final String CAROL = "carol-secret-token-4";
  /** May use namespace {@code gb} only. */
  static final String DAVE = "dave-secret-token-5";
  static final String CAROLS = "ga";
  private static final MediaType JSON = MediaType.get("application/json");
  private static final AtomicInteger NAMES = new AtomicInteger();
  private static final Duration WAIT = Duration.ofSeconds(120);

  static Path root;
  static RestAdapter dir;
  static TokenGate gate;
  static MaterializedViewServer service;
  static String serviceUri;
  static SparkSession user;
  static final OkHttpClient HTTP = new OkHttpClient.Builder()
      .readTimeout(60, TimeUnit.SECONDS).build();

  @BeforeAll
  static void start() throws IOException {
    root = Files.createTempDirectory("mv-service");
    dir = new RestAdapter("dir", Map.of("root", root.toString()), "127.0.0.1", 0);
    dir.start();
    gate = new TokenGate("http://127.0.0.1:" + dir.getPort(), Map.of(
        SERVICE_TOKEN, TokenGate.Rights.ALL, ALICE, TokenGate.Rights.ALL,
        BOB, TokenGate.Rights.NONE, CAROL, TokenGate.Rights.only(CAROLS),
        DAVE, TokenGate.Rights.only("gb")));
    service = MaterializedViewServer.start(TestSpark.newSession(), ServerConfig.parse(
        new String[] {"--upstream", gate.uri(), "--token", SERVICE_TOKEN, "--port", "0",
            "--auto-refresh-poll", "300ms", "--auto-refresh-cooldown", "0",
            "--max-body-bytes", "64k"}));
    serviceUri = "http://127.0.0.1:" + service.port();
    user = TestSpark.newSession();
    user.conf().set("spark.sql.catalog.lance", "io.lancerest.spark.catalog.LanceRestCatalog");
    user.conf().set("spark.sql.catalog.lance.uri", gate.uri());
    user.conf().set("spark.sql.catalog.lance.token", ALICE);
  }

  @AfterAll
  static void stop() {
    try {
      service.close();
    } finally {
      gate.close();
      dir.close();
    }
  }

  // ------------------------------------------------------------------ helpers

  /** The directory server over a new temporary folder, started. */
  static RestAdapter dirServer(String prefix) throws IOException {
    RestAdapter d = new RestAdapter("dir", Map.of("root",
        Files.createTempDirectory(prefix).toString()), "127.0.0.1", 0);
    d.start();
    return d;
  }

  /** A session whose catalog {@code lance} is the server at {@code uri}, active. */
  static SparkSession lanceSession(String uri, String tokenOrNull) {
    return session("lance", uri, tokenOrNull);
  }

  /** A session whose catalog {@code catalog} is the server at {@code uri}, active. */
  static SparkSession session(String catalog, String uri, String tokenOrNull) {
    SparkSession s = TestSpark.newSession();
    String prefix = "spark.sql.catalog." + catalog;
    s.conf().set(prefix, "io.lancerest.spark.catalog.LanceRestCatalog");
    s.conf().set(prefix + ".uri", uri);
    if (tokenOrNull != null) {
      s.conf().set(prefix + ".token", tokenOrNull);
    }
    SparkSession.setActiveSession(s);
    return s;
  }

  record Answer(int status, String body, String retryAfter, String wwwAuthenticate) {
    JsonNode json() {
      try {
        return LanceJson.mapper().readTree(body);
      } catch (IOException e) {
        throw new AssertionError("not JSON: " + body, e);
      }
    }
  }

  static Answer post(String path, String body, String token) {
    return post(serviceUri, path, body, token);
  }

  static Answer post(String base, String path, String body, String token) {
    Request.Builder b = new Request.Builder().url(base + path)
        .post(RequestBody.create(body.getBytes(StandardCharsets.UTF_8), JSON));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    try (Response r = HTTP.newCall(b.build()).execute()) {
      return new Answer(r.code(), r.body() == null ? "" : r.body().string(),
          r.header("Retry-After"), r.header("WWW-Authenticate"));
    } catch (IOException e) {
      throw new AssertionError("POST " + path + " failed: " + e, e);
    }
  }

  /** A session whose catalog {@code svc} points at the service, as alice. */
  static SparkSession serviceSession() {
    return serviceSession(ALICE);
  }

  /** A session whose catalog {@code svc} points at the service, as {@code token}. */
  static SparkSession serviceSession(String token) {
    return session("svc", serviceUri, token);
  }

  static List<String> rows(String sql) {
    SparkSession.setActiveSession(user);
    List<String> out = new ArrayList<>();
    for (Row r : user.sql(sql).collectAsList()) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < r.length(); i++) {
        sb.append(i == 0 ? "" : "|").append(r.isNullAt(i) ? "null" : r.get(i).toString());
      }
      out.add(sb.toString());
    }
    out.sort(null);
    return out;
  }

  static void sql(String sql) {
    SparkSession.setActiveSession(user);
    user.sql(sql).collectAsList();
  }

  /** A namespace with {@code src (id BIGINT, doc STRING, cat STRING)}, 3 rows. */
  static String newSource() {
    String ns = "svc" + NAMES.incrementAndGet();
    sql("CREATE NAMESPACE lance." + ns);
    sql("CREATE TABLE lance." + ns + ".src (id BIGINT, doc STRING, cat STRING)");
    sql("INSERT INTO lance." + ns + ".src VALUES (1, 'alpha beta', 'x'), (2, 'gamma', 'y'), "
        + "(3, 'delta epsilon zeta', 'x')");
    return ns;
  }

  static String schemaOf(Field... fields) {
    return Base64.getEncoder().encodeToString(ArrowIpc.toStream(new Schema(List.of(fields)),
        List.of()));
  }

  static Field field(String name, ArrowType t) {
    return new Field(name, FieldType.nullable(t), null);
  }

  /** A query view of {@code id, doc} where {@code id > 1}. */
  static String queryView(String ns, boolean withNoData) {
    SourceQuery q = SourceQuery.of(List.of(ns, "src"), List.of(ns), List.of(
        new SourceQuery.OutputColumn("id", "id"), new SourceQuery.OutputColumn("doc", "doc")),
        "id > 1", null);
    CreateMaterializedViewRequest r = new CreateMaterializedViewRequest().id(List.of(ns, "v"))
        .kind(CreateMaterializedViewRequest.KindEnum.QUERY).sourceQuery(q.toJson())
        .outputSchema(schemaOf(field("id", new ArrowType.Int(64, true)),
            field("doc", ArrowType.Utf8.INSTANCE)))
        .withNoData(withNoData);
    return write(r);
  }

  static String write(Object request) {
    try {
      return LanceJson.mapper().writeValueAsString(request);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** Polls job/describe until the job has ended; fails naming the last state seen. */
  static JsonNode awaitJob(String ns, String view, String jobId) {
    return awaitJob(serviceUri, ALICE, ns, view, jobId);
  }

  /** {@link #awaitJob(String, String, String)} of the service at {@code base}, as {@code token}. */
  static JsonNode awaitJob(String base, String token, String ns, String view, String jobId) {
    long deadline = System.nanoTime() + WAIT.toNanos();
    JsonNode last = null;
    while (System.nanoTime() < deadline) {
      Answer a = post(base, "/v1/materialized_view/" + ns + "$" + view + "/job/describe",
          "{\"job_id\":\"" + jobId + "\"}", token);
      if (a.status() == 200) {
        last = a.json();
        String s = last.path("status").asText();
        if (!s.equals("SUBMITTED") && !s.equals("RUNNING")) {
          return last;
        }
      } else if (a.status() != 404) {
        throw new AssertionError("job/describe answered " + a.status() + ": " + a.body());
      }
      sleep(200);
    }
    throw new AssertionError("job " + jobId + " of " + ns + "." + view + " did not end within "
        + WAIT + "; last seen: " + last);
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  static boolean tableExists(String ns, String name) {
    SparkSession.setActiveSession(user);
    return user.catalog().tableExists("lance." + ns + "." + name);
  }

  // ------------------------------------------------------------------ tests

  @Test
  void aQueryViewCreatedWithDataIsRefreshedByTheServiceAndAgainAfterAnInsert() {
    String ns = newSource();
    Answer created = post("/v1/materialized_view/" + ns + "$v/create", queryView(ns, false),
        ALICE);
    assertEquals(201, created.status(), created.body());
    assertTrue(created.json().path("version").asLong() >= 1, created.body());
    String job = created.json().path("job_id").asText();
    assertFalse(job.isEmpty(), created.body());
    JsonNode done = awaitJob(ns, "v", job);
    assertEquals("DONE", done.path("status").asText(), done.toString());
    assertEquals("service", done.path("launched_by").asText(), done.toString());
    assertEquals(List.of("2|gamma", "3|delta epsilon zeta"),
        rows("SELECT id, doc FROM lance." + ns + ".v"));

    sql("INSERT INTO lance." + ns + ".src VALUES (4, 'eta', 'y')");
    Answer refreshed = post("/v1/materialized_view/" + ns + "$v/refresh", "{}", ALICE);
    assertEquals(202, refreshed.status(), refreshed.body());
    String again = refreshed.json().path("job_id").asText();
    assertNotEquals(job, again);
    assertEquals("DONE", awaitJob(ns, "v", again).path("status").asText());
    assertEquals(List.of("2|gamma", "3|delta epsilon zeta", "4|eta"),
        rows("SELECT id, doc FROM lance." + ns + ".v"));

    // both jobs are listed, newest first, one page at a time
    Answer page1 = post("/v1/materialized_view/" + ns + "$v/job/list", "{\"limit\":1}", ALICE);
    assertEquals(200, page1.status(), page1.body());
    assertEquals(again, page1.json().path("jobs").get(0).path("job_id").asText());
    String token = page1.json().path("page_token").asText();
    Answer page2 = post("/v1/materialized_view/" + ns + "$v/job/list",
        "{\"limit\":1,\"page_token\":\"" + token + "\"}", ALICE);
    assertEquals(job, page2.json().path("jobs").get(0).path("job_id").asText(), page2.body());
    assertTrue(page2.json().path("page_token").isMissingNode(), page2.body());
  }

  @Test
  void aQueryViewCreatedWithoutOutputSchemaGetsTheColumnsPrintCreateRequestDerives() {
    String ns = newSource();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int rc = PrintCreateRequest.run(new String[] {"--uri", gate.uri(),
        "--token", ALICE, "--sql", "CREATE MATERIALIZED VIEW " + ns + ".p AS SELECT id, "
        + "upper(doc) AS loud FROM " + ns + ".src WHERE id > 1"},
        new PrintStream(out, true), new PrintStream(err, true),
        TestSpark::newSession);
    String printed = out.toString(StandardCharsets.UTF_8);
    assertEquals(0, rc, err.toString(StandardCharsets.UTF_8));
    assertEquals(1, printed.strip().lines().count(), printed);
    assertFalse((printed + err).contains(ALICE), "the token was printed");
    ObjectNode body = (ObjectNode) tree(printed);
    assertEquals("query", body.path("kind").asText(), printed);
    assertTrue(body.path("source_query").asText().contains("upper(doc)"), printed);
    Schema declared = CreateRequests.schema(body.path("output_schema").asText());
    assertEquals(List.of("__source_row_id", "__is_set", "id", "loud"),
        declared.getFields().stream().map(Field::getName).toList());
    assertFalse(tableExists(ns, "p"), "printing created the view");

    // without output_schema, the service derives the same columns
    ObjectNode bare = body.deepCopy();
    bare.remove("output_schema");
    bare.put("with_no_data", false);
    Answer created = post("/v1/materialized_view/" + ns + "$p/create", bare.toString(), ALICE);
    assertEquals(201, created.status(), created.body());
    JsonNode done = awaitJob(ns, "p", created.json().path("job_id").asText());
    assertEquals("DONE", done.path("status").asText(), done.toString());
    assertEquals(List.of("2|GAMMA", "3|DELTA EPSILON ZETA"),
        rows("SELECT id, loud FROM lance." + ns + ".p"));

    // the printed body, output_schema and all, is accepted as it is (another view's path)
    body.remove("id");
    Answer asPrinted = post("/v1/materialized_view/" + ns + "$p2/create", body.toString(),
        ALICE);
    assertEquals(201, asPrinted.status(), asPrinted.body());
    assertTrue(tableExists(ns, "p2"));

    // a readable output_schema: the table routes' JsonArrowSchema, as a JSON string
    ObjectNode readable = bare.deepCopy();
    readable.put("with_no_data", true);
    readable.put("output_schema", "{\"fields\":[{\"name\":\"id\",\"type\":{\"type\":"
        + "\"int64\"},\"nullable\":true},{\"name\":\"loud\",\"type\":{\"type\":\"utf8\"},"
        + "\"nullable\":true}]}");
    readable.remove("id");
    Answer json = post("/v1/materialized_view/" + ns + "$p3/create", readable.toString(), ALICE);
    assertEquals(201, json.status(), json.body());
    readable.put("output_schema", "{\"fields\": 7}");
    Answer badJson = post("/v1/materialized_view/" + ns + "$p4/create", readable.toString(),
        ALICE);
    assertEquals(400, badJson.status(), badJson.body());
    assertTrue(badJson.json().path("error").asText().contains("not a JsonArrowSchema"),
        badJson.body());
  }

  @Test
  void theDerivedOutputSchemaKeepsASourceVectorAVector() {
    String ns = newSource();
    sql("CREATE TABLE lance." + ns + ".vecs (id BIGINT, vec ARRAY<FLOAT>) TBLPROPERTIES "
        + "('vec.arrow.fixed-size-list.size' = '4')");
    sql("INSERT INTO lance." + ns + ".vecs SELECT id, array(CAST(id AS FLOAT), 1F, 2F, 3F) "
        + "FROM range(0, 6)");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int rc = PrintCreateRequest.run(new String[] {"--uri", gate.uri(),
        "--token", ALICE, "--sql", "CREATE MATERIALIZED VIEW " + ns + ".nv AS SELECT id, vec "
        + "AS emb FROM " + ns + ".vecs WHERE id > 1"},
        new PrintStream(out, true), new PrintStream(err, true),
        TestSpark::newSession);
    assertEquals(0, rc, err.toString(StandardCharsets.UTF_8));
    ObjectNode body = (ObjectNode) tree(out.toString(StandardCharsets.UTF_8));
    Field emb = CreateRequests.schema(body.path("output_schema").asText()).findField("emb");
    assertEquals(new ArrowType.FixedSizeList(4), emb.getType());

    // created from the bare request, the service derives the same vector column
    body.remove("output_schema");
    body.put("with_no_data", false);
    Answer created = post("/v1/materialized_view/" + ns + "$nv/create", body.toString(), ALICE);
    assertEquals(201, created.status(), created.body());
    JsonNode done = awaitJob(ns, "nv", created.json().path("job_id").asText());
    assertEquals("DONE", done.path("status").asText(), done.toString());
    SparkSession.setActiveSession(user);
    // lance-spark gives a Lance fixed-size list this metadata, and nothing else
    assertEquals(4L, user.table("lance." + ns + ".nv").schema().apply("emb").metadata()
        .getLong("arrow.fixed-size-list.size"));
    assertEquals(List.of("4"), rows("SELECT count(*) FROM lance." + ns + ".nv"));
  }

  @Test
  void aChunkerViewCreatedWithoutDataHasNoJobUntilARefresh() {
    String ns = newSource();
    Schema out = new Schema(List.of(
        new Field("chunk", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null),
        new Field("char_offset", FieldType.notNullable(new ArrowType.Int(32, true)), null)));
    FunctionEnvelope env = FunctionEnvelope.java(TextSplitter.class.getName(), "split", "1", out,
        List.of("doc"), false, Map.of("chunk_size", "6"));
    SourceQuery q = SourceQuery.of(List.of(ns, "src"), List.of(ns), List.of(
        new SourceQuery.OutputColumn("id", "id"), new SourceQuery.OutputColumn("doc", "doc")),
        null, null);
    String body = write(new CreateMaterializedViewRequest().id(List.of(ns, "c"))
        .kind(CreateMaterializedViewRequest.KindEnum.CHUNKER)
        .sourceQuery(q.toJson()).outputSchema(schemaOf(field("chunk", ArrowType.Utf8.INSTANCE)))
        .udtfSpec(FunctionSpec.of(MaterializedViewKind.CHUNKER, env).toWire()));
    Answer created = post("/v1/materialized_view/" + ns + "$c/create", body, ALICE);
    assertEquals(201, created.status(), created.body());
    assertTrue(created.json().path("job_id").isMissingNode(), created.body());
    assertEquals(List.of(), rows("SELECT chunk FROM lance." + ns + ".c"));

    // output_limit is a chunker option: accepted here
    Answer refreshed = post("/v1/materialized_view/" + ns + "$c/refresh",
        "{\"output_limit\": 100}", ALICE);
    assertEquals(202, refreshed.status(), refreshed.body());
    assertEquals("DONE", awaitJob(ns, "c", refreshed.json().path("job_id").asText())
        .path("status").asText());
    assertTrue(rows("SELECT chunk FROM lance." + ns + ".c").contains("alpha "),
        rows("SELECT chunk FROM lance." + ns + ".c").toString());
  }

  /** The function classes whose static initializer ran, in this JVM. */
  static final java.util.Set<String> INITIALIZED =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** Neither a UDTF nor a chunker: a class a caller names to run its initializer. */
  public static final class NotAFunction {
    static {
      INITIALIZED.add(NotAFunction.class.getName());
    }

    public NotAFunction() {}
  }

  /**
   * A regression guard, not new behaviour: create has checked the class's type before
   * initializing it all along (refresh's UDTF loader is what changed; FunctionClassLoadingTest).
   */
  @Test
  void aFunctionClassOfAnotherTypeIsRefusedAtCreateWithoutRunningItsInitializer() {
    String ns = newSource();
    Schema out = new Schema(List.of(
        new Field("chunk", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null)));
    for (MaterializedViewKind kind : List.of(MaterializedViewKind.UDTF,
        MaterializedViewKind.CHUNKER)) {
      FunctionEnvelope env = FunctionEnvelope.java(NotAFunction.class.getName(), "f", "1", out,
          List.of("doc"), false, Map.of());
      SourceQuery q = SourceQuery.of(List.of(ns, "src"), List.of(ns), List.of(
          new SourceQuery.OutputColumn("id", "id"), new SourceQuery.OutputColumn("doc", "doc")),
          null, null);
      String body = write(new CreateMaterializedViewRequest().id(List.of(ns, "f"))
          .kind(CreateMaterializedViewRequest.KindEnum.fromValue(kind.wire()))
          .sourceQuery(q.toJson()).udtfSpec(FunctionSpec.of(kind, env).toWire()));
      Answer a = post("/v1/materialized_view/" + ns + "$f/create", body, ALICE);
      assertEquals(400, a.status(), kind + ": " + a.body());
      String want = kind == MaterializedViewKind.UDTF
          ? "UDTF class '" + NotAFunction.class.getName() + "' does not implement "
              + io.lancerest.spark.mv.function.BatchUdtf.class.getName()
          : "Chunker class '" + NotAFunction.class.getName() + "' does not implement "
              + io.lancerest.spark.mv.function.Chunker.class.getName();
      assertEquals(want, a.json().path("error").asText(), a.body());
      assertFalse(INITIALIZED.contains(NotAFunction.class.getName()),
          kind + ": the class's static initializer ran");
      assertFalse(tableExists(ns, "f"));
    }
  }

  /** A chunker whose static initializer fails, as one reading a missing setting would. */
  public static final class BrokenChunker implements io.lancerest.spark.mv.function.Chunker {
    static {
      if (Boolean.parseBoolean("true")) {
        throw new IllegalStateException("CHUNKER_MODEL is not set");
      }
    }

    @Override
    public java.util.Iterator<Row> chunk(Row input) {
      return java.util.Collections.emptyIterator();
    }
  }

  @Test
  void aFunctionClassWhoseInitializerFailsIsThe400EveryTimeItIsNamed() {
    String ns = newSource();
    Schema out = new Schema(List.of(
        new Field("chunk", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null)));
    FunctionEnvelope env = FunctionEnvelope.java(BrokenChunker.class.getName(), "b", "1", out,
        List.of("doc"), false, Map.of());
    SourceQuery q = SourceQuery.of(List.of(ns, "src"), List.of(ns), List.of(
        new SourceQuery.OutputColumn("id", "id"), new SourceQuery.OutputColumn("doc", "doc")),
        null, null);
    String body = write(new CreateMaterializedViewRequest().id(List.of(ns, "b"))
        .kind(CreateMaterializedViewRequest.KindEnum.CHUNKER).sourceQuery(q.toJson())
        .udtfSpec(FunctionSpec.of(MaterializedViewKind.CHUNKER, env).toWire()));
    // the JVM runs the initializer at the first create only; the second meets its leftover
    for (int attempt = 1; attempt <= 2; attempt++) {
      Answer a = post("/v1/materialized_view/" + ns + "$b/create", body, ALICE);
      assertEquals(400, a.status(), "attempt " + attempt + ": " + a.body());
      assertEquals("chunker class '" + BrokenChunker.class.getName() + "' failed in its static "
          + "initializer: java.lang.IllegalStateException: CHUNKER_MODEL is not set. Fix the "
          + "class (or the environment it reads) and restart the JVM that loaded it (the Spark "
          + "application, or the view service): a JVM never runs a failed static initializer "
          + "again", a.json().path("error").asText(), "attempt " + attempt);
      assertFalse(tableExists(ns, "b"));
    }
  }

  @Test
  void badRequestsAre400WithTheSpecsErrorBodyAndCreateNothing() {
    String ns = newSource();
    String path = "/v1/materialized_view/" + ns + "$bad/create";
    String good = queryView(ns, true).replace("\"" + ns + "\",\"v\"", "\"" + ns + "\",\"bad\"");
    ObjectNode noKind = (ObjectNode) tree(good);
    noKind.remove("kind");
    ObjectNode unknownKind = (ObjectNode) tree(good);
    unknownKind.put("kind", "graph");
    ObjectNode wrongType = (ObjectNode) tree(good);
    wrongType.putArray("with_no_data").add(1).add(2);
    ObjectNode badSchema = (ObjectNode) tree(good);
    badSchema.put("output_schema", "bm90IGFycm93");
    ObjectNode specOnQuery = (ObjectNode) tree(good);
    specOnQuery.putObject("udtf_spec").put("kind", "udtf").put("udtf", "x").put("udtf_sha", "y")
        .put("udtf_name", "n").put("udtf_version", "1");
    Map<String, String> cases = new java.util.LinkedHashMap<>();
    cases.put("{not json", "Malformed CreateMaterializedViewRequest");
    cases.put(noKind.toString(), "kind is required");
    cases.put(unknownKind.toString(), "graph");
    cases.put(wrongType.toString(), "Malformed CreateMaterializedViewRequest");
    cases.put(badSchema.toString(), "output_schema is not an Arrow IPC stream");
    cases.put(specOnQuery.toString(), "udtf_spec must be null for a query view");
    cases.put("{\"kind\":\"query\",\"source_query\":\"{}\",\"output_schema\":\"x\","
        + "\"padding\":\"" + "p".repeat(70_000) + "\"}", "larger than 65536 bytes");
    for (Map.Entry<String, String> c : cases.entrySet()) {
      Answer a = post(path, c.getKey(), ALICE);
      assertEquals(400, a.status(), c.getValue() + ": " + a.body());
      assertEquals(13, a.json().path("code").asInt(), a.body());
      assertTrue(a.json().path("error").asText().contains(c.getValue()), a.body());
      assertEquals(path, a.json().path("instance").asText(), a.body());
    }
    assertFalse(tableExists(ns, "bad"));

    // output_limit on a query view is the spec's 400
    assertEquals(201, post("/v1/materialized_view/" + ns + "$v/create", queryView(ns, true),
        ALICE).status());
    Answer limit = post("/v1/materialized_view/" + ns + "$v/refresh", "{\"output_limit\":5}",
        ALICE);
    assertEquals(400, limit.status(), limit.body());
    assertTrue(limit.json().path("error").asText().contains("output_limit caps the rows of a "
        + "chunker view"), limit.body());
    // an existing view is 409, an unknown one 404
    Answer twice = post("/v1/materialized_view/" + ns + "$v/create", queryView(ns, true), ALICE);
    assertEquals(409, twice.status(), twice.body());
    Answer missing = post("/v1/materialized_view/" + ns + "$nope/refresh", "{}", ALICE);
    assertEquals(404, missing.status(), missing.body());
  }

  @Test
  void aCallerTheUpstreamRefusesGetsItsAnswerAndNothingRunsOrLeaksASecret() {
    try (LogCapture log = new LogCapture()) {
      refusedCallers(log);
    }
  }

  private void refusedCallers(LogCapture log) {
    String ns = newSource();
    String create = "/v1/materialized_view/" + ns + "$v/create";
    Answer anonymous = post(create, queryView(ns, false), null);
    assertEquals(401, anonymous.status(), anonymous.body());
    assertEquals(16, anonymous.json().path("code").asInt());
    Answer bob = post(create, queryView(ns, false), BOB);
    assertEquals(403, bob.status(), bob.body());
    assertEquals(15, bob.json().path("code").asInt());
    assertFalse(tableExists(ns, "v"));

    Answer made = post(create, queryView(ns, false), ALICE);
    assertEquals(201, made.status(), made.body());
    String job = made.json().path("job_id").asText();
    JsonNode done = awaitJob(ns, "v", job);
    for (String path : List.of("/refresh", "/job/list")) {
      Answer a = post("/v1/materialized_view/" + ns + "$v" + path, "{}", BOB);
      assertEquals(403, a.status(), path + ": " + a.body());
    }
    Answer peek = post("/v1/materialized_view/" + ns + "$v/job/describe",
        "{\"job_id\":\"" + job + "\"}", BOB);
    assertEquals(403, peek.status(), peek.body());
    assertEquals(1, post("/v1/materialized_view/" + ns + "$v/job/list", "{}", ALICE).json()
        .path("jobs").size(), "bob's refresh ran");
    List<String> texts = new ArrayList<>(List.of(done.toString(), anonymous.body(), bob.body(),
        peek.body()));
    texts.addAll(log.lines);
    assertTrue(log.lines.size() > 10, "nothing was logged: " + log.lines);
    for (String text : texts) {
      for (String secret : List.of(SERVICE_TOKEN, ALICE, BOB)) {
        assertFalse(text.contains(secret), "a secret in " + text);
      }
    }
  }

  @Test
  void everyOtherRouteIsTheUpstreamsThroughTheService() {
    String ns = newSource();
    SparkSession s = serviceSession();
    s.sql("CREATE TABLE svc." + ns + ".t AS SELECT id, doc FROM svc." + ns + ".src").collect();
    s.sql("INSERT INTO svc." + ns + ".t VALUES (9, 'nine')").collect();
    assertEquals(4, s.sql("SELECT * FROM svc." + ns + ".t").count());
    for (int v = 1; v <= 2; v++) {
      assertEquals(rows("SELECT id FROM lance." + ns + ".t VERSION AS OF " + v),
          s.sql("SELECT id FROM svc." + ns + ".t VERSION AS OF " + v).collectAsList().stream()
              .map(r -> String.valueOf(r.get(0))).sorted().toList(), "version " + v);
    }
    assertEquals(4, rows("SELECT id FROM lance." + ns + ".t").size());
    // the upstream's refusal passes through unchanged
    s.conf().set("spark.sql.catalog.bob", "io.lancerest.spark.catalog.LanceRestCatalog");
    s.conf().set("spark.sql.catalog.bob.uri", serviceUri);
    s.conf().set("spark.sql.catalog.bob.token", BOB);
    Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class,
        () -> s.sql("SELECT * FROM bob." + ns + ".t").collect());
    assertTrue(String.valueOf(e.getMessage()).contains("403")
        || String.valueOf(e.getMessage()).toLowerCase(java.util.Locale.ROOT)
            .contains("permission"), e.toString());
    s.sql("DROP TABLE svc." + ns + ".t PURGE").collect();
    assertFalse(s.catalog().tableExists("svc." + ns + ".t"));
    assertEquals(List.of("src"), s.sql("SHOW TABLES IN svc." + ns).collectAsList().stream()
        .map(r -> r.getString(1)).toList());
  }

  @Test
  void anUnreachableUpstreamIs503WithTheSpecsBodyAndNoJobIsLeftBehind() throws IOException {
    int closed;
    try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
      closed = free.getLocalPort();
    }
    try (MaterializedViewServer down = MaterializedViewServer.start(TestSpark.newSession(),
        ServerConfig.parse(new String[] {"--upstream", "http://127.0.0.1:" + closed, "--port",
            "0", "--auto-refresh", "false"}))) {
      String base = "http://127.0.0.1:" + down.port();
      for (String path : List.of("/v1/materialized_view/ns$v/create",
          "/v1/materialized_view/ns$v/refresh", "/v1/namespace/ns/describe")) {
        Answer a = post(base, path, path.endsWith("create") ? queryView("ns", false) : "{}",
            ALICE);
        assertEquals(503, a.status(), path + ": " + a.body());
        assertEquals(17, a.json().path("code").asInt(), a.body());
        assertEquals("5", a.retryAfter(), path);
        assertTrue(a.json().path("error").asText().contains("cannot be reached"), a.body());
      }
    }
  }

  @Test
  void aViewWithAutoRefreshFollowsItsSourceThroughJobsLaunchedByAuto() {
    String ns = newSource();
    ObjectNode body = (ObjectNode) tree(queryView(ns, false));
    body.put("auto_refresh", true);
    Answer created = post("/v1/materialized_view/" + ns + "$v/create", body.toString(), ALICE);
    assertEquals(201, created.status(), created.body());
    awaitJob(ns, "v", created.json().path("job_id").asText());
    // a plain view of the same source is left alone
    Answer plain = post("/v1/materialized_view/" + ns + "$p/create",
        queryView(ns, true).replace("\"" + ns + "\",\"v\"", "\"" + ns + "\",\"p\""), ALICE);
    assertEquals(201, plain.status(), plain.body());

    sql("INSERT INTO lance." + ns + ".src VALUES (7, 'theta', 'z')");
    long deadline = System.nanoTime() + WAIT.toNanos();
    List<String> seen = List.of();
    while (System.nanoTime() < deadline) {
      seen = rows("SELECT id FROM lance." + ns + ".v");
      if (seen.contains("7")) {
        break;
      }
      sleep(200);
    }
    assertEquals(List.of("2", "3", "7"), seen, "the view did not follow its source within "
        + WAIT);
    JsonNode jobs = post("/v1/materialized_view/" + ns + "$v/job/list", "{}", ALICE).json()
        .path("jobs");
    assertEquals("auto", jobs.get(0).path("launched_by").asText(), jobs.toString());
    assertEquals(0, post("/v1/materialized_view/" + ns + "$p/job/list", "{}", ALICE).json()
        .path("jobs").size(), "the view without auto_refresh was refreshed");
  }

  @Test
  void theCatalogPointedAtTheServiceMakesServerManagedViewsAndWaitsForTheirJobs() {
    String ns = newSource();
    SparkSession s = serviceSession();
    Row created = s.sql("CREATE MATERIALIZED VIEW svc." + ns + ".sv AS SELECT id, doc FROM svc."
        + ns + ".src WHERE id > 1").collectAsList().get(0);
    assertEquals("SUBMITTED", created.getAs("status"), created.toString());
    awaitJob(ns, "sv", created.getAs("job_id"));
    assertEquals(List.of("2|gamma", "3|delta epsilon zeta"),
        rows("SELECT id, doc FROM lance." + ns + ".sv"));

    sql("INSERT INTO lance." + ns + ".src VALUES (5, 'iota', 'x')");
    Row submitted = s.sql("REFRESH MATERIALIZED VIEW svc." + ns + ".sv").collectAsList().get(0);
    assertEquals("SUBMITTED", submitted.getAs("status"), submitted.toString());
    awaitJob(ns, "sv", submitted.getAs("job_id"));
    sql("INSERT INTO lance." + ns + ".src VALUES (6, 'kappa', 'y')");
    SparkSession.setActiveSession(s);
    Row waited = s.sql("REFRESH MATERIALIZED VIEW svc." + ns + ".sv WAIT").collectAsList()
        .get(0);
    assertEquals("DONE", waited.getAs("status"), waited.toString());
    assertEquals(1L, (long) waited.getAs("rows_inserted"), waited.toString());
    assertEquals(List.of("2|gamma", "3|delta epsilon zeta", "5|iota", "6|kappa"),
        rows("SELECT id, doc FROM lance." + ns + ".sv"));

    // SHOW JOBS and DESCRIBE JOB read the job log the service writes
    SparkSession.setActiveSession(s);
    List<Row> jobs = s.sql("SHOW JOBS FOR svc." + ns + ".sv").collectAsList();
    assertEquals(3, jobs.size(), jobs.toString());
    assertEquals((String) waited.getAs("job_id"), (String) jobs.get(0).getAs("job_id"));
    String describe = s.sql("DESCRIBE JOB '" + waited.getAs("job_id") + "' IN svc")
        .collectAsList().toString();
    assertTrue(describe.contains("Launched by,service"), describe);
  }

  @Test
  void anAggregateViewIsCreatedAndRefreshedIncrementallyThroughTheService() {
    String ns = newSource();
    SparkSession s = serviceSession();
    String select = "SELECT cat, count(*) AS n, sum(id) AS s, max(doc) AS m FROM svc." + ns
        + ".src GROUP BY cat";
    Row created = s.sql("CREATE MATERIALIZED VIEW svc." + ns + ".agg AS " + select)
        .collectAsList().get(0);
    assertEquals("SUBMITTED", created.getAs("status"), created.toString());
    awaitJob(ns, "agg", created.getAs("job_id"));
    String read = "SELECT cat, n, s, m FROM lance." + ns + ".agg";
    assertEquals(List.of("x|2|4|delta epsilon zeta", "y|1|2|gamma"), rows(read));

    sql("INSERT INTO lance." + ns + ".src VALUES (7, 'omega', 'y'), (8, 'new', 'z')");
    sql("DELETE FROM lance." + ns + ".src WHERE id = 3");
    SparkSession.setActiveSession(s);
    Row waited = s.sql("REFRESH MATERIALIZED VIEW svc." + ns + ".agg WAIT").collectAsList()
        .get(0);
    assertEquals("DONE", waited.getAs("status"), waited.toString());
    assertEquals(List.of("x|1|1|alpha beta", "y|2|9|omega", "z|1|8|new"), rows(read));
    assertEquals(rows(select.replace("svc.", "lance.")), rows("SELECT * FROM lance." + ns
        + ".agg"), "SELECT * shows the SELECT's columns only");
  }

  @Test
  void aViewCreatedInSqlWithAutoRefreshIsFoundWhenTheServiceStarts() throws IOException {
    String ns = newSource();
    sql("CREATE MATERIALIZED VIEW lance." + ns + ".a OPTIONS (auto_refresh = true) AS SELECT id "
        + "FROM lance." + ns + ".src");
    try (MaterializedViewServer second = MaterializedViewServer.start(TestSpark.newSession(),
        ServerConfig.parse(new String[] {"--upstream", gate.uri(), "--token", SERVICE_TOKEN,
            "--port", "0", "--auto-refresh-poll", "300ms", "--auto-refresh-cooldown", "0"}))) {
      sql("INSERT INTO lance." + ns + ".src VALUES (8, 'iota', 'x')");
      long deadline = System.nanoTime() + WAIT.toNanos();
      List<String> seen = List.of();
      while (System.nanoTime() < deadline && !seen.contains("8")) {
        sleep(200);
        seen = rows("SELECT id FROM lance." + ns + ".a");
      }
      assertEquals(List.of("1", "2", "3", "8"), seen, "the view did not follow its source within "
          + WAIT);
    }
  }

  @Test
  void jobsAreReadThroughTheirViewOnlyAndTheWireIsReadStrictly() {
    String ns = newSource();
    Answer a = post("/v1/materialized_view/" + ns + "$v/create", queryView(ns, false), ALICE);
    String job = a.json().path("job_id").asText();
    awaitJob(ns, "v", job);
    Answer b = post("/v1/materialized_view/" + ns + "$w/create",
        queryView(ns, true).replace("\"" + ns + "\",\"v\"", "\"" + ns + "\",\"w\""), ALICE);
    assertEquals(201, b.status(), b.body());
    // a job of v is not a job of w, and an unknown id is unknown
    for (String[] c : new String[][] {{"w", job}, {"v", "no-such-job"}}) {
      Answer r = post("/v1/materialized_view/" + ns + "$" + c[0] + "/job/describe",
          "{\"job_id\":\"" + c[1] + "\"}", ALICE);
      assertEquals(404, r.status(), r.body());
      assertTrue(r.json().path("error").asText().contains("is not a refresh of view"), r.body());
    }
    // a string is not a number, and nothing may follow the object
    Answer typed = post("/v1/materialized_view/" + ns + "$v/refresh", "{\"concurrency\":\"4\"}",
        ALICE);
    assertEquals(400, typed.status(), typed.body());
    Answer trailing = post("/v1/materialized_view/" + ns + "$v/refresh", "{} {}", ALICE);
    assertEquals(400, trailing.status(), trailing.body());
    // a path is forwarded as it is or not at all (HTTP clients resolve plain dot segments
    // themselves; an encoded one reaches the service)
    assertFalse(Upstream.plainPath("/v1/table/a/%2E%2e/namespace/x/describe"));
    assertFalse(Upstream.plainPath("/v1/table/a/./describe"));
    assertTrue(Upstream.plainPath("/v1/table/a.b%24c/describe"));
  }

  @Test
  void aCallersExpressionCannotReachBeyondTheSourceItMaySee() {
    String ns = newSource();
    String other = newSource();
    SourceQuery q = SourceQuery.of(List.of(ns, "src"), List.of(ns), List.of(
        new SourceQuery.OutputColumn("id", "id"), new SourceQuery.OutputColumn("stolen",
            "(SELECT max(doc) FROM " + MaterializedViewServer.CATALOG + "." + other + ".src)")),
        null, null);
    String body = write(new CreateMaterializedViewRequest().id(List.of(ns, "x"))
        .kind(CreateMaterializedViewRequest.KindEnum.QUERY)
        .sourceQuery(q.toJson()).outputSchema(schemaOf(field("id", new ArrowType.Int(64, true)))));
    Answer a = post("/v1/materialized_view/" + ns + "$x/create", body, ALICE);
    assertEquals(400, a.status(), a.body());
    assertTrue(a.json().path("error").asText().contains("subquery"), a.body());
    assertFalse(tableExists(ns, "x"));
  }

  @Test
  void aSourceQueryOnTheClockIsRefusedAsInSql() {
    String ns = newSource();
    SourceQuery q = SourceQuery.of(List.of(ns, "src"), List.of(ns), List.of(
        new SourceQuery.OutputColumn("id", "id")), "current_date() > DATE '2000-01-01'", null);
    String body = write(new CreateMaterializedViewRequest().id(List.of(ns, "today"))
        .kind(CreateMaterializedViewRequest.KindEnum.QUERY)
        .sourceQuery(q.toJson()).outputSchema(schemaOf(field("id", new ArrowType.Int(64, true)))));
    Answer a = post("/v1/materialized_view/" + ns + "$today/create", body, ALICE);
    assertEquals(400, a.status(), a.body());
    assertTrue(a.json().path("error").asText().startsWith("The SELECT of view "
        + MaterializedViewServer.CATALOG + "." + ns + ".today uses current_date() in WHERE, "
        + "whose value changes between refreshes: the view could not equal its SELECT after a "
        + "refresh"), a.body());
    assertFalse(tableExists(ns, "today"));
  }

  /**
   * A view stored with a function of the clock, as a version that did not refuse one stored it
   * (its definition rewritten on the view table, nothing checked): the service's refresh refuses
   * it as SQL's does, the job ends FAILED saying why and what to do, and nothing is committed.
   */
  @Test
  void aViewStoredWithTheClockIsRefusedByTheServicesRefresh() {
    String ns = newSource();
    Answer created = post("/v1/materialized_view/" + ns + "$v/create", queryView(ns, false),
        ALICE);
    assertEquals(201, created.status(), created.body());
    assertEquals("DONE", awaitJob(ns, "v", created.json().path("job_id").asText())
        .path("status").asText());
    CatalogBinding.TableLocation view = CatalogBinding.of(user, "lance").locate(
        List.of(ns, "v"), "view");
    long version;
    try (BufferAllocator a = new RootAllocator(); org.lance.Dataset ds = org.lance.Dataset.open(
        a, view.location(), new ReadOptions.Builder().setStorageOptions(view.storageOptions())
            .build())) {
      SourceQuery q = SourceQuery.fromJson(ds.getSchema().getCustomMetadata()
          .get(GenevaLayout.QUERY));
      SourceQuery clock = new SourceQuery(q.format(), q.dialect(), q.sourceTableId(),
          q.sourceNamespace(), q.projection(), q.filter() + " AND current_date() > DATE "
              + "'2000-01-01'", q.limit(), q.aggregation());
      version = ViewCommit.builder(view.location(), ds.version())
          .storageOptions(view.storageOptions())
          .schemaMetadata(Map.of(GenevaLayout.QUERY, clock.toJson())).build().commit()
          .version();
    }
    sql("INSERT INTO lance." + ns + ".src VALUES (4, 'eta', 'y')");

    Answer refreshed = post("/v1/materialized_view/" + ns + "$v/refresh", "{}", ALICE);
    assertEquals(202, refreshed.status(), refreshed.body());
    JsonNode job = awaitJob(ns, "v", refreshed.json().path("job_id").asText());
    assertEquals("FAILED", job.path("status").asText(), job.toString());
    String name = MaterializedViewServer.CATALOG + "." + ns + ".v";
    String message = job.path("message").asText();
    assertTrue(message.startsWith("View " + name + " cannot be refreshed: its SELECT uses "
        + "current_date() in WHERE, whose value changes between refreshes"), message);
    assertTrue(message.contains(". Re-create the view without current_date() (DROP "
        + "MATERIALIZED VIEW " + name + ", then CREATE MATERIALIZED VIEW): "), message);
    assertEquals(String.valueOf(version), rows("SHOW TBLPROPERTIES lance." + ns + ".v "
        + "('current-version')").get(0).split("\\|")[1], "a version was committed");
    assertEquals(List.of("2|gamma", "3|delta epsilon zeta"),
        rows("SELECT id, doc FROM lance." + ns + ".v"));
  }

  static JsonNode tree(String json) {
    try {
      return LanceJson.mapper().readTree(json);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void aCallerWithRightsOnItsNamespaceOnlyFollowsAndCancelsJobsThroughTheService() {
    sql("CREATE NAMESPACE lance." + CAROLS);
    sql("CREATE TABLE lance." + CAROLS + ".src (id BIGINT, doc STRING)");
    sql("INSERT INTO lance." + CAROLS + ".src VALUES (1, 'a'), (2, 'b')");
    String v = "svc." + CAROLS + ".sv";
    SparkSession carol = serviceSession(CAROL);
    Row created = carol.sql("CREATE MATERIALIZED VIEW " + v + " AS SELECT id, doc FROM svc."
        + CAROLS + ".src").collectAsList().get(0);
    String first = created.getAs("job_id");
    awaitJob(CAROLS, "sv", first);
    sql("INSERT INTO lance." + CAROLS + ".src VALUES (3, 'c')");
    SparkSession.setActiveSession(carol);
    Row waited = carol.sql("REFRESH MATERIALIZED VIEW " + v + " WAIT").collectAsList().get(0);
    assertEquals("DONE", waited.getAs("status"), waited.toString());
    String second = waited.getAs("job_id");

    // the job log's namespace is refused to carol: her job statements go through the service
    assertThrows(ForbiddenException.class, () -> carol.sql("SELECT * FROM svc.__system.mv_jobs")
        .collectAsList());
    List<Row> jobs = carol.sql("SHOW JOBS FOR " + v).collectAsList();
    assertEquals(List.of(second, first), jobs.stream().map(r -> (String) r.getAs("job_id"))
        .toList(), jobs.toString());
    String described = carol.sql("DESCRIBE JOB '" + second + "' IN svc").collectAsList()
        .toString();
    assertTrue(described.contains("DONE"), described);
    SparkSession.setActiveSession(serviceSession(CAROL)); // a new session remembers no job ids
    String forView = SparkSession.active().sql("DESCRIBE JOB '" + first + "' FOR " + v)
        .collectAsList().toString();
    assertTrue(forView.contains(first), forView);
    MaterializedViewException unnamed = assertThrows(MaterializedViewException.class,
        () -> SparkSession.active().sql("DESCRIBE JOB '" + first + "' IN svc").collectAsList());
    assertTrue(unnamed.getMessage().contains("FOR <view>"), unnamed.getMessage());

    // cancel: an ended job is a conflict that says so, an unknown one is not a job of the view
    SparkSession.setActiveSession(carol);
    Exception ended = assertThrows(Exception.class, () -> carol.sql("CANCEL JOB '" + second
        + "' FOR " + v).collectAsList());
    assertTrue(ended.getMessage().contains("has already ended (DONE)"), ended.getMessage());
    Answer unknown = post("/v1/materialized_view/" + CAROLS + "$sv/job/cancel",
        "{\"job_id\":\"no-such-job\"}", CAROL);
    assertEquals(404, unknown.status(), unknown.body());

    // another caller's rights: dave may not see ga (403, code 15); no token is 401 (code 16)
    Answer dave = post("/v1/materialized_view/" + CAROLS + "$sv/job/list", "{}", DAVE);
    assertEquals(403, dave.status(), dave.body());
    assertEquals(15, dave.json().path("code").asInt(), dave.body());
    SparkSession daves = serviceSession(DAVE);
    assertThrows(ForbiddenException.class, () -> daves.sql("SHOW JOBS FOR " + v)
        .collectAsList());
    Answer nobody = post("/v1/materialized_view/" + CAROLS + "$sv/job/cancel",
        "{\"job_id\":\"" + second + "\"}", null);
    assertEquals(401, nobody.status(), nobody.body());
    assertEquals(16, nobody.json().path("code").asInt(), nobody.body());
  }
}
