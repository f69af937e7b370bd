package io.lancerest.spark.mv.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.faults.FaultProxy;
import io.lancerest.spark.mv.TestSpark;
import io.lancerest.spark.mv.server.MaterializedViewServerTest.Answer;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.lance.namespace.RestAdapter;

/**
 * {@code --require-write-permission}: the directory server behind a token gate that gives
 * {@value #READER} and callers without a token read routes only (a mock of a server that
 * authorizes writes apart from reads; the directory server authenticates nobody). Without the
 * setting a reader creates and refreshes views through the service; with it, only a caller the
 * upstream lets create the view's namespace does, and the check changes no namespace.
 */
class WritePermissionTest {
  static final String SERVICE = "svc-secret-token-w1";
  static final String WRITER = "writer-secret-token-w2";
  static final String READER = "reader-secret-token-w3";

  static RestAdapter dir;
  static TokenGate gate;
  static MaterializedViewServer open;
  static MaterializedViewServer strict;
  static SparkSession user;

  @BeforeAll
  static void start() throws Exception {
    dir = MaterializedViewServerTest.dirServer("mv-write-permission");
    gate = new TokenGate("http://127.0.0.1:" + dir.getPort(), Map.of(SERVICE,
        TokenGate.Rights.ALL, WRITER, TokenGate.Rights.ALL, READER, TokenGate.Rights.READ,
        TokenGate.ANONYMOUS, TokenGate.Rights.READ));
    open = service(gate.uri(), false);
    strict = service(gate.uri(), true);
    user = MaterializedViewServerTest.lanceSession(gate.uri(), WRITER);
    user.sql("CREATE NAMESPACE lance.w").collect();
    user.sql("CREATE TABLE lance.w.src (id BIGINT, doc STRING)").collect();
    user.sql("INSERT INTO lance.w.src VALUES (1, 'a'), (2, 'b')").collect();
  }

  static MaterializedViewServer service(String upstream, boolean requireWrite) {
    return MaterializedViewServer.start(TestSpark.newSession(), ServerConfig.parse(new String[] {
        "--upstream", upstream, "--token", SERVICE, "--port", "0", "--auto-refresh", "false",
        "--require-write-permission", Boolean.toString(requireWrite)}));
  }

  @AfterAll
  static void stop() {
    try {
      open.close();
      strict.close();
    } finally {
      gate.close();
      dir.close();
    }
  }

  static Answer post(MaterializedViewServer s, String path, String body, String token) {
    return MaterializedViewServerTest.post("http://127.0.0.1:" + s.port(), path, body, token);
  }

  /** The create body of query view {@code w.<name>} of {@code w.src}. */
  static String view(String name) {
    return MaterializedViewServerTest.queryView("w", true).replace("\"w\",\"v\"",
        "\"w\",\"" + name + "\"");
  }

  static List<String> tables() {
    SparkSession.setActiveSession(user);
    return user.sql("SHOW TABLES IN lance.w").collectAsList().stream()
        .map(r -> r.getString(1)).sorted().toList();
  }

  /** Every namespace, with its properties: what a CreateNamespace could change. */
  static Map<String, Map<String, String>> namespaces() {
    try (io.lancerest.client.LanceRestClient c = io.lancerest.client.LanceRestClient.create(
        Map.of("uri", "http://127.0.0.1:" + dir.getPort()))) {
      Map<String, Map<String, String>> out = new java.util.TreeMap<>();
      collect(c, List.of(), out);
      return out;
    }
  }

  private static void collect(io.lancerest.client.LanceRestClient c, List<String> parent,
      Map<String, Map<String, String>> out) {
    for (String child : c.listAllNamespaces(parent).toList()) {
      List<String> ns = new java.util.ArrayList<>(parent);
      ns.add(child);
      Map<String, String> props = c.describeNamespace(
          new io.lancerest.client.model.DescribeNamespaceRequest().id(ns)).getProperties();
      out.put(String.join(".", ns), props == null ? Map.of() : props);
      collect(c, ns, out);
    }
  }

  static boolean exists(String name) {
    SparkSession.setActiveSession(user);
    return user.catalog().tableExists("lance.w." + name);
  }

  @Test
  void withoutTheSettingAReaderCreatesAndRefreshesViews() {
    Answer created = post(open, "/v1/materialized_view/w$byreader/create", view("byreader"),
        READER);
    assertEquals(201, created.status(), created.body());
    assertTrue(exists("byreader"));
    assertEquals(202, post(open, "/v1/materialized_view/w$byreader/refresh", "{}", READER)
        .status());
  }

  @Test
  void withTheSettingAReaderIsRefused403AndAWriterIsServed() {
    List<String> before = tables();
    Map<String, Map<String, String>> namespaces = namespaces();
    Answer refused = post(strict, "/v1/materialized_view/w$r1/create", view("r1"), READER);
    assertEquals(403, refused.status(), refused.body());
    assertEquals(15, refused.json().path("code").asInt(), refused.body());
    assertEquals("This service may create view w.r1 only for a caller the upstream lets create "
        + "namespace w (--require-write-permission); the upstream refused this caller that "
        + "(CreateNamespace with mode ExistOk answered 403). Ask the upstream's administrator "
        + "for that right, or ask someone who has it to create the view",
        refused.json().path("error").asText());
    assertFalse(exists("r1"), "the refused create created the view");
    assertEquals(before, tables(), "the check changed the namespace's tables");
    assertEquals(namespaces, namespaces(), "the check changed a namespace");

    Answer created = post(strict, "/v1/materialized_view/w$w1/create", view("w1"), WRITER);
    assertEquals(201, created.status(), created.body());
    assertEquals(namespaces, namespaces(), "the writer's check, which the upstream ran, "
        + "changed a namespace");
    Answer refresh = post(strict, "/v1/materialized_view/w$w1/refresh", "{}", WRITER);
    assertEquals(202, refresh.status(), refresh.body());
    String job = refresh.json().path("job_id").asText();
    MaterializedViewServerTest.awaitJob("http://127.0.0.1:" + strict.port(), WRITER, "w", "w1",
        job);

    Answer readerRefresh = post(strict, "/v1/materialized_view/w$w1/refresh", "{}", READER);
    assertEquals(403, readerRefresh.status(), readerRefresh.body());
    assertTrue(readerRefresh.json().path("error").asText().startsWith("This service may "
        + "refresh view w.w1 only for a caller the upstream lets create namespace w"),
        readerRefresh.body());
    Answer readerCancel = post(strict, "/v1/materialized_view/w$w1/job/cancel",
        "{\"job_id\":\"" + job + "\"}", READER);
    assertEquals(403, readerCancel.status(), readerCancel.body());
    // reading stays a reader's right
    Answer list = post(strict, "/v1/materialized_view/w$w1/job/list", "{}", READER);
    assertEquals(200, list.status(), list.body());
    assertEquals(1, list.json().path("jobs").size(), "the reader's refresh ran: " + list.body());
  }

  @Test
  void aCallerTheUpstreamDoesNotKnowGetsItsOwn401ToPassOn() {
    // anyone may read here: the describes pass, the write check is the upstream's 401
    Answer a = post(strict, "/v1/materialized_view/w$anon/create", view("anon"), null);
    assertEquals(401, a.status(), a.body());
    assertEquals(TokenGate.CHALLENGE, a.wwwAuthenticate(), "the upstream's challenge");
    assertEquals("{\"error\":\"missing or unknown token\",\"code\":16}", a.body(),
        "the upstream's body, as it came");
    assertFalse(exists("anon"));
    assertEquals(201, post(open, "/v1/materialized_view/w$anon/create", view("anon"), null)
        .status(), "without the setting, reading is enough");
  }

  @Test
  void theCheckIsDecidedByTheUpstreamsStatusFirst() throws Exception {
    try (FaultProxy proxy = FaultProxy.start(gate.uri());
        MaterializedViewServer s = service(proxy.uri(), true)) {
      String exists = "{\"error\":\"Namespace w already exists\",\"code\":2}";
      // status of the upstream's CreateNamespace -> the service's answer to the create
      record Case(int upstream, String body, int service, String errorHas) {}
      List<Case> cases = List.of(
          new Case(406, "{\"error\":\"not acceptable\"}", 502,
              "answered 406 to CreateNamespace of namespace w with mode ExistOk"),
          new Case(500, "{\"error\":\"boom\",\"code\":18}", 503,
              "The upstream failed to answer whether this caller may write in namespace w "
              + "(CreateNamespace with mode ExistOk answered 500); retry later"),
          new Case(503, "{\"error\":\"busy\"}", 503, "answered 503); retry later"),
          // "already exists" in a refusal's body is still a refusal
          new Case(401, exists, 401, null),
          new Case(403, exists, 403, "the upstream refused this caller that"),
          new Case(400, "{\"error\":\"bad mode\",\"code\":13}", 502,
              "answered 400 to CreateNamespace"),
          // an upstream that ignores the mode says so past its permission check
          new Case(400, exists, 201, null),
          new Case(409, "{\"error\":\"conflict\"}", 201, null));
      for (int i = 0; i < cases.size(); i++) {
        Case c = cases.get(i);
        String name = "n" + i;
        proxy.reset();
        proxy.on("POST", "namespace/create").forId("w").always()
            .body(c.upstream(), "application/json", c.body());
        Answer a = post(s, "/v1/materialized_view/w$" + name + "/create", view(name), WRITER);
        String what = "upstream " + c.upstream() + " " + c.body() + ": " + a.body();
        assertEquals(c.service(), a.status(), what);
        assertEquals(c.service() == 201, exists(name), what);
        if (c.service() == 503) {
          assertEquals("5", a.retryAfter(), what);
        }
        if (c.service() == 401) {
          assertEquals(c.body(), a.body(), "the upstream's 401 passed on: " + what);
        }
        if (c.errorHas() != null) {
          assertTrue(a.json().path("error").asText().contains(c.errorHas()), what);
        }
      }
    }
  }
}
