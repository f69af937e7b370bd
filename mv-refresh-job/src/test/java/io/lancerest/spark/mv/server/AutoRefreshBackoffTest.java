package io.lancerest.spark.mv.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lancerest.client.model.CreateMaterializedViewRequest;
import io.lancerest.spark.mv.TestSpark;
import io.lancerest.spark.mv.chunker.TestChunkers;
import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.definition.FunctionSpec;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.server.MaterializedViewServerTest.Answer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.lance.namespace.RestAdapter;

/**
 * A view whose refresh always fails, watched by auto refresh: the service tries it again after
 * waits that double (1 s, 2 s, 4 s, then 8 s: the configured maximum), says so in the view's
 * status and job list, and a refresh asked for once the cause is gone runs at once, succeeds
 * and clears the failures.
 */
class AutoRefreshBackoffTest {
  private static final Duration WAIT = Duration.ofSeconds(120);

  @Test
  void failedAutoRefreshesAreTriedAgainAfterGrowingWaitsThatASuccessClears() throws Exception {
    RestAdapter dir = MaterializedViewServerTest.dirServer("mv-backoff");
    String upstream = "http://127.0.0.1:" + dir.getPort();
    SparkSession user = MaterializedViewServerTest.lanceSession(upstream, null);
    user.sql("CREATE NAMESPACE lance.b").collect();
    user.sql("CREATE TABLE lance.b.src (id BIGINT, doc STRING)").collect();
    user.sql("INSERT INTO lance.b.src VALUES (1, 'alpha beta'), (2, 'BOOM here')").collect();
    try (MaterializedViewServer s = MaterializedViewServer.start(TestSpark.newSession(),
        ServerConfig.parse(new String[] {"--upstream", upstream, "--port", "0",
            "--auto-refresh-poll", "100ms", "--auto-refresh-cooldown", "0",
            "--auto-refresh-backoff", "1s", "--auto-refresh-backoff-max", "8s"}))) {
      String base = "http://127.0.0.1:" + s.port();
      Answer created = MaterializedViewServerTest.post(base, "/v1/materialized_view/b$c/create",
          failingChunkerView(), null);
      assertEquals(201, created.status(), created.body());

      // four automatic attempts, each after the wait its predecessor's failure set
      List<JsonNode> auto = awaitAutoJobs(base, 4);
      long[] waits = {1000, 2000, 4000};
      for (int i = 0; i < waits.length; i++) {
        JsonNode failed = auto.get(i);
        JsonNode next = auto.get(i + 1);
        assertEquals("FAILED", failed.path("status").asText(), failed.toString());
        assertTrue(failed.path("message").asText().contains("cannot chunk BOOM here"),
            failed.toString());
        long gap = next.path("started_at").asLong() - failed.path("finished_at").asLong();
        assertTrue(gap >= waits[i], "attempt " + (i + 2) + " started " + gap + " ms after "
            + "attempt " + (i + 1) + " failed; the wait after " + (i + 1) + " failures is "
            + waits[i] + " ms");
      }

      // the state is where users look: the view's status route and its job list
      JsonNode st = awaitFailures(base, 4);
      JsonNode ar = st.path("auto_refresh");
      assertEquals("backing_off", ar.path("state").asText(), st.toString());
      assertTrue(ar.path("watched").asBoolean(), st.toString());
      assertEquals(4, ar.path("consecutive_failures").asInt(), st.toString());
      assertTrue(ar.path("last_error").asText().contains("cannot chunk BOOM here"),
          st.toString());
      assertEquals(8000, ar.path("next_attempt_at").asLong()
          - ar.path("last_failure_at").asLong(), "the wait after 4 failures: " + st);
      assertEquals("FAILED", st.path("latest_job").path("status").asText(), st.toString());
      JsonNode listed = MaterializedViewServerTest.post(base, "/v1/materialized_view/b$c/job/list",
          "{}", null).json();
      assertEquals("backing_off", listed.path("auto_refresh").path("state").asText(),
          listed.toString());

      // the cause removed, a refresh asked for runs at once, succeeds and clears the failures
      SparkSession.setActiveSession(user);
      user.sql("DELETE FROM lance.b.src WHERE id = 2").collect();
      long asked = System.currentTimeMillis();
      Answer manual = MaterializedViewServerTest.post(base, "/v1/materialized_view/b$c/refresh",
          "{}", null);
      assertEquals(202, manual.status(), manual.body());
      JsonNode done = MaterializedViewServerTest.awaitJob(base, null, "b", "c",
          manual.json().path("job_id").asText());
      assertEquals("DONE", done.path("status").asText(), done.toString());
      assertTrue(done.path("started_at").asLong() < ar.path("next_attempt_at").asLong(),
          "the refresh asked for waited for the backoff (asked at " + asked + ", next automatic "
          + "attempt at " + ar.path("next_attempt_at").asLong() + "): " + done);
      JsonNode after = status(base).path("auto_refresh");
      assertEquals("watching", after.path("state").asText(), after.toString());
      assertEquals(0, after.path("consecutive_failures").asInt(), after.toString());
      assertTrue(after.path("next_attempt_at").isMissingNode(), after.toString());
      SparkSession.setActiveSession(user);
      assertEquals(2, user.sql("SELECT chunk FROM lance.b.c").count(), "alpha, beta");
    } finally {
      dir.close();
    }
  }

  /** A chunker view of {@code b.src} whose function fails on every doc holding "BOOM". */
  private static String failingChunkerView() {
    Schema out = new Schema(List.of(
        new Field("chunk", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null),
        new Field("char_offset", FieldType.notNullable(new ArrowType.Int(32, true)), null)));
    FunctionEnvelope env = FunctionEnvelope.java(TestChunkers.Failing.class.getName(), "split",
        "1", out, List.of("doc"), false, Map.of());
    SourceQuery q = SourceQuery.of(List.of("b", "src"), List.of("b"), List.of(
        new SourceQuery.OutputColumn("id", "id"), new SourceQuery.OutputColumn("doc", "doc")),
        null, null);
    return MaterializedViewServerTest.write(new CreateMaterializedViewRequest()
        .id(List.of("b", "c")).kind(CreateMaterializedViewRequest.KindEnum.CHUNKER)
        .sourceQuery(q.toJson()).autoRefresh(true)
        .udtfSpec(FunctionSpec.of(MaterializedViewKind.CHUNKER, env).toWire()));
  }

  private static JsonNode status(String base) {
    Answer a = MaterializedViewServerTest.post(base, "/v1/materialized_view/b$c/status", "{}",
        null);
    assertEquals(200, a.status(), a.body());
    return a.json();
  }

  /** The view's status once auto refresh has counted {@code n} failures in a row. */
  private static JsonNode awaitFailures(String base, int n) {
    long deadline = System.nanoTime() + WAIT.toNanos();
    JsonNode st = null;
    while (System.nanoTime() < deadline) {
      st = status(base);
      if (st.path("auto_refresh").path("consecutive_failures").asInt() >= n) {
        return st;
      }
      MaterializedViewServerTest.sleep(50);
    }
    throw new AssertionError("auto refresh did not count " + n + " failures within " + WAIT
        + ": " + st);
  }

  /** The first {@code n} ended auto-launched jobs of {@code b.c}, oldest first. */
  private static List<JsonNode> awaitAutoJobs(String base, int n) {
    long deadline = System.nanoTime() + WAIT.toNanos();
    List<JsonNode> ended = List.of();
    while (System.nanoTime() < deadline) {
      JsonNode jobs = MaterializedViewServerTest.post(base,
          "/v1/materialized_view/b$c/job/list", "{\"limit\":100}", null).json().path("jobs");
      List<JsonNode> found = new ArrayList<>();
      for (JsonNode j : jobs) {
        String status = j.path("status").asText();
        if (j.path("launched_by").asText().equals("auto") && !status.equals("RUNNING")
            && !status.equals("SUBMITTED")) {
          found.add(0, j); // the list is newest first
        }
      }
      ended = found;
      if (ended.size() >= n) {
        return ended.subList(0, n);
      }
      MaterializedViewServerTest.sleep(200);
    }
    throw new AssertionError(n + " auto refreshes of b.c did not end within " + WAIT
        + "; ended: " + ended);
  }
}
