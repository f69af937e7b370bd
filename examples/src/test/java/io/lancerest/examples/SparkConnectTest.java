package io.lancerest.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.testing.ChildJvm;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.io.TempDir;
import org.lance.namespace.RestAdapter;

/**
 * Spark Connect: the server {@code org.apache.spark.sql.connect.service.SparkConnectServer}
 * (spark-connect_2.12 3.5.5) started by {@code SparkSubmit} as {@code
 * sbin/start-connect-server.sh} starts it, with {@code --properties-file} the docs' {@code
 * examples/conf/spark-defaults.conf} (the catalog, the default catalog and the SQL extension; see
 * {@link SparkClients}), on a free port; and, in another JVM, a program built against the Spark
 * Connect JVM client 3.5.0 only ({@link ConnectClient}) that connects with {@code
 * SparkSession.builder().remote("sc://127.0.0.1:<port>")} and runs {@link #SCRIPT}: catalog SQL,
 * DataFrame reads and writes of catalog tables, every materialized-view statement, and statements
 * that fail. The test checks what the client received.
 */
@Tag("slow")
@Execution(ExecutionMode.CONCURRENT) // its work runs in child JVMs: next to the other classes
class SparkConnectTest {
  private static final Duration SERVER_START = Duration.ofSeconds(240);
  private static final Duration CLIENT_RUN = Duration.ofSeconds(420);
  private static final Pattern STARTED = Pattern.compile(
      "Spark Connect server started at: \\S+:(\\d+)");
  private static final Pattern STEP = Pattern.compile("@@ (\\S+) (row|ok|error) ?(.*)");
  private static final String TEXT_SPLITTER = "'io.lancerest.spark.mv.chunker.TextSplitter'";

  /**
   * The client's steps, {@code <label> <verb> <argument>} (see ConnectScript); {@code %1$s} is
   * the TextSplitter class, {@code %2$s} the REST server's uri.
   */
  static final String SCRIPT = """
      client-version     version -
      server-version     sql SELECT version() AS v
      ns                 sql CREATE NAMESPACE cx
      create-table       sql CREATE TABLE cx.docs (id BIGINT, topic STRING, body STRING, score INT)
      insert             sql INSERT INTO cx.docs VALUES (1, 'tea', 'Green tea. Black tea.', 5), \
      (2, 'tea', 'Oolong.', 9), (3, 'coffee', 'Espresso. Latte.', 7)
      df-append          append cx.docs <- SELECT 4L AS id, 'coffee' AS topic, 'Mocha.' AS body, \
      8 AS score
      df-read            table cx.docs
      sql-at             sql SELECT id FROM cx.docs VERSION AS OF 2 ORDER BY id
      df-at              table-at cx.docs 2
      df-create          create cx.tea <- SELECT id, score FROM cx.docs WHERE topic = 'tea'
      df-read-created    table cx.tea
      own-catalog        conf spark.sql.catalog.mine=io.lancerest.spark.catalog.LanceRestCatalog
      own-catalog-uri    conf spark.sql.catalog.mine.uri=%2$s
      own-catalog-read   sql SHOW TABLES IN mine.cx
      query-view         sql CREATE MATERIALIZED VIEW cx.good AS SELECT id, score * 10 AS points \
      FROM cx.docs WHERE score >= 7
      chunker-view       sql CREATE MATERIALIZED VIEW cx.sentences USING CHUNKER %1$s \
      OPTIONS (input_columns = 'body', separator = '. ') AS SELECT id, body FROM cx.docs
      udtf-view          sql CREATE MATERIALIZED VIEW cx.best USING UDTF \
      'io.lancerest.spark.mv.udtf.TopKUdtf' PARTITION BY topic \
      OPTIONS (k = '1', order_by = 'score') \
      AS SELECT topic, id, score FROM cx.docs
      empty-view         sql CREATE MATERIALIZED VIEW cx.later AS SELECT id FROM cx.docs \
      WITH NO DATA
      change             append cx.docs <- SELECT 5L AS id, 'tea' AS topic, \
      'Matcha. Sencha.' AS body, 10 AS score
      explain            sql EXPLAIN REFRESH MATERIALIZED VIEW cx.good
      refresh-good       sql REFRESH MATERIALIZED VIEW cx.good
      refresh-sentences  sql REFRESH MATERIALIZED VIEW cx.sentences
      refresh-best       sql REFRESH MATERIALIZED VIEW cx.best WITH (concurrency = 2)
      async              sql REFRESH MATERIALIZED VIEW cx.later ASYNC
      await              await-job cx.later
      describe-job       sql DESCRIBE JOB '${job_id}'
      cancel-ended       sql CANCEL JOB '${job_id}'
      show-jobs          sql SHOW JOBS FOR cx.good
      show               sql SHOW MATERIALIZED VIEWS IN cx
      describe           sql DESCRIBE MATERIALIZED VIEW cx.sentences
      optimize           sql OPTIMIZE MATERIALIZED VIEW cx.good
      read-good          table cx.good
      read-sentences     sql SELECT id, chunk FROM cx.sentences ORDER BY id, char_offset
      read-best          table cx.best
      read-later         table cx.later
      drop               sql DROP MATERIALIZED VIEW cx.later
      show-after-drop    sql SHOW MATERIALIZED VIEWS IN cx
      missing            sql REFRESH MATERIALIZED VIEW cx.missing
      missing-table      sql SELECT * FROM cx.nope
      bad-option         sql CREATE MATERIALIZED VIEW cx.bad USING CHUNKER %1$s \
      OPTIONS (input_columns = 'body', chunk_size = -3) AS SELECT id, body FROM cx.docs
      join               sql CREATE MATERIALIZED VIEW cx.joined AS SELECT a.id FROM cx.docs a \
      JOIN cx.tea b ON a.id = b.id
      bad-refresh-option sql REFRESH MATERIALIZED VIEW cx.good WITH (colour = 'red')
      unknown-job        sql DESCRIBE JOB 'no-such-job'
      drop-missing       sql DROP MATERIALIZED VIEW cx.missing
      write-to-view      append cx.good <- SELECT 1L AS id, 10 AS points
      syntax             sql CREATE MATERIALIZED VIEW cx.x USING PYTHON 'f' AS SELECT id \
      FROM cx.docs
      """;

  @TempDir
  static Path dir;
  private static RestAdapter rest;
  private static ChildJvm server;
  private static final Map<String, List<Map<String, String>>> ROWS = new LinkedHashMap<>();
  private static final Map<String, String> ERRORS = new LinkedHashMap<>();
  private static String transcript;

  @BeforeAll
  static void runTheScript() throws Exception {
    rest = SparkClients.restServer(dir);
    Path conf = SparkClients.confFile(dir, rest);
    // sbin/start-connect-server.sh: spark-submit --class ...SparkConnectServer --name "Spark
    // Connect server"; port 0 picks a free one, which the server logs
    server = SparkClients.submit("Spark Connect server", conf,
        "org.apache.spark.sql.connect.service.SparkConnectServer", "Spark Connect server",
        List.of("-Xmx2g"), List.of("spark.connect.grpc.binding.port=0"), "spark-internal");
    long t0 = System.nanoTime();
    String clientClassPath = ConnectClient.classPath(dir); // while the server starts
    long t1 = System.nanoTime();
    server.awaitOutput("Spark Connect server started at: ", SERVER_START);
    long t2 = System.nanoTime();
    Matcher m = STARTED.matcher(server.output());
    assertTrue(m.find(), server.output());
    try (ChildJvm client = ChildJvm.start("Spark Connect client", ConnectClient.MAIN,
        clientClassPath, List.of("-Xmx512m"), "sc://127.0.0.1:" + m.group(1))) {
      client.input(SCRIPT.formatted(TEXT_SPLITTER, "http://127.0.0.1:" + rest.getPort()));
      transcript = client.awaitSuccess(CLIENT_RUN);
    }
    // into the surefire report's -output.txt
    System.out.printf("client class path %d ms, server up after %d ms, client run %d ms%n",
        (t1 - t0) / 1_000_000, (t2 - t0) / 1_000_000, (System.nanoTime() - t2) / 1_000_000);
    System.out.println(transcript);
    for (String line : transcript.split("\n")) {
      Matcher s = STEP.matcher(line);
      if (s.matches()) {
        List<Map<String, String>> rows = ROWS.computeIfAbsent(s.group(1), k -> new ArrayList<>());
        if (s.group(2).equals("row")) {
          Map<String, String> row = new LinkedHashMap<>();
          for (String cell : s.group(3).split("\t")) {
            String[] kv = cell.split("=", 2);
            row.put(kv[0], kv[1]);
          }
          rows.add(row);
        } else if (s.group(2).equals("error")) {
          ERRORS.put(s.group(1), s.group(3));
        }
      }
    }
    assertTrue(transcript.contains("@@ end"), transcript);
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
    if (rest != null) {
      rest.close();
    }
  }

  @Test
  void aClientOfSpark350TalksToAServerOfSpark355() {
    assertEquals("3.5.0", cell("client-version", "client"));
    assertEquals("3.5.5", cell("client-version", "server")); // what spark.version() reports
    assertTrue(cell("server-version", "v").startsWith("3.5.5 "), cell("server-version", "v"));
  }

  @Test
  void catalogTablesThroughSqlAndDataFrames() {
    for (String step : List.of("ns", "create-table", "insert", "df-append", "df-create")) {
      assertOk(step);
    }
    assertEquals(List.of("1|tea|Green tea. Black tea.|5", "2|tea|Oolong.|9",
        "3|coffee|Espresso. Latte.|7", "4|coffee|Mocha.|8"), rows("df-read"));
    // version 2 is the SQL INSERT; the DataFrame append made version 3
    assertEquals(List.of("1", "2", "3"), rows("sql-at"));
    assertEquals(rows("sql-at"), rows("df-at").stream().map(r -> r.split("\\|")[0]).toList());
    assertEquals(List.of("1|5", "2|9"), rows("df-read-created"));
    // a client may add a catalog of its own to its session, as a notebook would
    assertEquals(List.of("cx|docs|false", "cx|tea|false"), sorted("own-catalog-read"));
  }

  @Test
  void everyMaterializedViewStatement() {
    assertEquals("DONE|query|3|0", result("query-view"));
    assertEquals("DONE|chunker|6|0", result("chunker-view"));
    assertEquals("DONE|udtf|2|0", result("udtf-view"));
    assertEquals(List.of(), ROWS.get("empty-view"));
    assertOk("empty-view");

    Map<String, String> explain = info("explain");
    assertEquals("incremental", explain.get("Mode"));
    assertEquals("+1", explain.get("Expected view row change"));
    assertEquals("DONE|query|1|0", result("refresh-good"));
    assertEquals("DONE|chunker|2|0", result("refresh-sentences"));
    assertTrue(result("refresh-best").startsWith("DONE|udtf|"), result("refresh-best"));

    // ASYNC returns at once; the job log has its end
    assertEquals("RUNNING", cell("async", "status"));
    String job = cell("async", "job_id");
    assertEquals(job, cell("await", "job_id"));
    assertEquals("DONE", cell("await", "status"));
    assertEquals("5", cell("await", "rows_inserted"));
    Map<String, String> describedJob = info("describe-job");
    assertEquals(job, describedJob.get("Job ID"));
    assertEquals("cx.later", describedJob.get("View"));
    assertEquals("DONE", describedJob.get("Status"));
    assertEquals(List.of("DONE", "DONE"), ROWS.get("show-jobs").stream()
        .map(r -> r.get("status")).toList());

    assertEquals(List.of("cx|best", "cx|good", "cx|later", "cx|sentences"), sorted("show"));
    Map<String, String> described = info("describe");
    assertEquals("chunker", described.get("Kind"));
    assertEquals("cx.docs", described.get("Source"));
    assertTrue(described.get("Function").contains(TEXT_SPLITTER.replace("'", "\"")),
        described.get("Function"));
    assertEquals(List.of("fragments_before", "fragments_after", "versions_removed",
        "bytes_removed"), List.copyOf(ROWS.get("optimize").get(0).keySet()));
    assertEquals("1", cell("optimize", "fragments_after"));

    assertEquals(List.of("2|90", "3|70", "4|80", "5|100"), rows("read-good"));
    assertEquals(List.of("1|Green tea", "1|Black tea.", "2|Oolong.", "3|Espresso", "3|Latte.",
        "4|Mocha.", "5|Matcha", "5|Sencha."), rows("read-sentences"));
    assertEquals(List.of("coffee|4|8|1", "tea|5|10|1"), rows("read-best"));
    assertEquals(List.of("1", "2", "3", "4", "5"), rows("read-later"));
    assertOk("drop");
    assertEquals(List.of("cx|best", "cx|good", "cx|sentences"), sorted("show-after-drop"));
  }

  @Test
  void errorsReachTheClientNamingTheObject() {
    // Errors of the engine arrive as SparkException with the gRPC status text (the 3.5.0
    // client has no class of its own for them); Spark's own errors keep their class.
    String grpc = "org.apache.spark.SparkException: "
        + "org.sparkproject.connect.client.io.grpc.StatusRuntimeException: INTERNAL: ";
    assertEquals(grpc + "Materialized view lance.cx.missing does not exist", ERRORS.get("missing"));
    assertEquals(grpc + "chunk_size must be a positive whole number, got '-3' (view lance.cx.bad, "
        + "chunker io.lancerest.spark.mv.chunker.TextSplitter)", ERRORS.get("bad-option"));
    assertTrue(ERRORS.get("join").startsWith(grpc + "The SELECT of query view lance.cx.joined "
        + "uses a join. A materialized view reads ONE source table"), ERRORS.get("join"));
    assertTrue(ERRORS.get("missing-table").startsWith("org.apache.spark.sql.AnalysisException: "
        + "[TABLE_OR_VIEW_NOT_FOUND] The table or view `cx`.`nope` cannot be found."),
        ERRORS.get("missing-table"));
    String job = cell("async", "job_id");
    assertEquals(grpc + "Job '" + job + "' of view cx.later has already ended (DONE); CANCEL JOB "
        + "stops RUNNING jobs only", ERRORS.get("cancel-ended"));
    assertTrue(ERRORS.get("bad-refresh-option").startsWith(grpc
        + "Unknown refresh option 'colour'; known options: "), ERRORS.get("bad-refresh-option"));
    assertEquals(grpc + "Job 'no-such-job' is not in the job log lance.__system.mv_jobs of "
        + "catalog 'lance'; SHOW JOBS lists the jobs it has", ERRORS.get("unknown-job"));
    assertEquals(grpc + "Materialized view lance.cx.missing does not exist",
        ERRORS.get("drop-missing"));
    // the catalog's UnsupportedCatalogOperationException is a Spark error: its class arrives
    assertEquals("org.apache.spark.SparkUnsupportedOperationException: Cannot write to "
        + "materialized view lance.cx.good: a materialized view is written only by REFRESH "
        + "MATERIALIZED VIEW, which keeps it equal to its definition over the source table. "
        + "Change the source table and refresh the view, or drop the view (DROP MATERIALIZED "
        + "VIEW)", ERRORS.get("write-to-view"));
    // the parser's message, with the statement and a caret on the lines below it
    assertTrue(ERRORS.get("syntax").startsWith(grpc + "Expected CHUNKER or UDTF after USING, "
        + "found 'PYTHON' at position 36: // CREATE MATERIALIZED VIEW cx.x USING PYTHON"),
        ERRORS.get("syntax"));
    // and nothing else failed
    assertEquals(List.of("missing", "missing-table", "bad-option", "join", "cancel-ended",
        "bad-refresh-option",
        "unknown-job", "drop-missing", "write-to-view", "syntax").stream().sorted().toList(),
        ERRORS.keySet().stream().sorted().toList(), ERRORS.toString());
  }

  private static void assertOk(String step) {
    assertTrue(transcript.contains("@@ " + step + " ok"), step + ": " + ERRORS.get(step));
  }

  private static String cell(String step, String column) {
    List<Map<String, String>> rows = ROWS.get(step);
    assertTrue(rows != null && !rows.isEmpty(), step + " returned no row: " + ERRORS.get(step));
    return rows.get(0).get(column);
  }

  /** status, kind, rows_inserted, rows_deleted of a CREATE or REFRESH. */
  private static String result(String step) {
    cell(step, "status"); // fails if there is no row
    return SparkClients.outcome(ROWS.get(step).get(0));
  }

  private static Map<String, String> info(String step) {
    Map<String, String> out = new LinkedHashMap<>();
    ROWS.getOrDefault(step, List.of()).forEach(r -> out.put(r.get("info_name"),
        r.get("info_value")));
    assertTrue(!out.isEmpty(), step + " returned no row: " + ERRORS.get(step));
    return out;
  }

  private static List<String> rows(String step) {
    assertOk(step);
    return ROWS.get(step).stream().map(r -> String.join("|", r.values())).toList();
  }

  private static List<String> sorted(String step) {
    return rows(step).stream().sorted().toList();
  }
}
