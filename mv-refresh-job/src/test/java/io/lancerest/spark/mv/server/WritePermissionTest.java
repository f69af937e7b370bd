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
 * {@value #READER} read routes only (a mock of a server that authorizes writes apart from
 * reads; the directory server authenticates nobody). Without the setting a reader creates and
 * refreshes views through the service; with it, only a caller the upstream lets write in the
 * view's namespace does.
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
        TokenGate.Rights.ALL, WRITER, TokenGate.Rights.ALL, READER, TokenGate.Rights.READ));
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
    Answer refused = post(strict, "/v1/materialized_view/w$r1/create", view("r1"), READER);
    assertEquals(403, refused.status(), refused.body());
    assertEquals(15, refused.json().path("code").asInt(), refused.body());
    assertEquals("This service may create view w.r1 only for a caller the upstream lets write "
        + "in namespace w (--require-write-permission); the upstream refused this caller's "
        + "write there (CreateNamespace with mode ExistOk answered 403). Ask its owner for "
        + "write permission on namespace w", refused.json().path("error").asText());
    assertFalse(exists("r1"), "the refused create created the view");
    assertEquals(before, tables(), "the check changed the namespace");

    Answer created = post(strict, "/v1/materialized_view/w$w1/create", view("w1"), WRITER);
    assertEquals(201, created.status(), created.body());
    Answer refresh = post(strict, "/v1/materialized_view/w$w1/refresh", "{}", WRITER);
    assertEquals(202, refresh.status(), refresh.body());
    String job = refresh.json().path("job_id").asText();
    MaterializedViewServerTest.awaitJob("http://127.0.0.1:" + strict.port(), WRITER, "w", "w1",
        job);

    Answer readerRefresh = post(strict, "/v1/materialized_view/w$w1/refresh", "{}", READER);
    assertEquals(403, readerRefresh.status(), readerRefresh.body());
    assertTrue(readerRefresh.json().path("error").asText().startsWith("This service may "
        + "refresh view w.w1 only for a caller the upstream lets write in namespace w"),
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
  void anUpstreamThatCannotAnswerTheCheckIsNamed() throws Exception {
    try (FaultProxy proxy = FaultProxy.start(gate.uri());
        MaterializedViewServer s = service(proxy.uri(), true)) {
      proxy.on("POST", "namespace/create").always().status(406, null);
      Answer a = post(s, "/v1/materialized_view/w$n1/create", view("n1"), WRITER);
      assertEquals(502, a.status(), a.body());
      assertTrue(a.json().path("error").asText().contains("answered 406 to CreateNamespace of "
          + "namespace w with mode ExistOk"), a.body());
      assertFalse(exists("n1"));
    }
  }
}
