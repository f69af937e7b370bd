package io.lancerest.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lancerest.faults.ViewFaultsFixture.Kind;
import io.lancerest.faults.ViewFaultsFixture.World;
import io.lancerest.spark.mv.chunker.ChunkerOutputException;
import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.engine.CatalogBinding;
import io.lancerest.spark.mv.error.EnvelopeChecksumException;
import io.lancerest.spark.mv.error.FunctionFailedException;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.layout.GenevaLayout;
import io.lancerest.spark.mv.result.JobRecord;
import io.lancerest.spark.mv.result.RefreshResult.JobStatus;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.lance.Dataset;
import org.lance.ReadOptions;

/**
 * View-specific bad input, end to end through SQL: a tampered function envelope on a stored
 * view, a chunker or UDTF emitting wrong types or nulls in non-null columns, a source whose
 * schema changed between refreshes, a SELECT stored with a function of the clock, and the CREATE/REFRESH validation cases that
 * {@code engine/ViewValidationTest} does not already cover. Each gets an error naming the view or
 * column and what to do, and leaves the view as it was (or no view at all).
 */
class ViewBadInputTest {
  static ViewFaultsFixture x;
  static World shared;

  @BeforeAll
  static void start() {
    x = new ViewFaultsFixture();
    shared = x.new World("bad").insert(30);
  }

  @AfterAll
  static void stop() {
    x.close();
  }

  @AfterEach
  void disarm() {
    Injected.disarm();
  }

  private static List<Row> refresh(World w, String view) {
    return x.f.sql("REFRESH MATERIALIZED VIEW " + w.view(ViewFaultsFixture.DIRECT, view));
  }

  /** Runs {@code failing}, expects {@code type}, and that the view kept its version and rows. */
  private static <T extends Throwable> T refusedUnchanged(World w, String view, Class<T> type,
      Executable failing) {
    long version = w.version(view);
    List<String> rows = w.rows(view);
    T e = assertThrows(type, failing);
    assertEquals(version, w.version(view), "a version was committed");
    assertEquals(rows, w.rows(view), "the view's rows changed");
    return e;
  }

  private static CatalogBinding.TableLocation locate(World w, String table) {
    return CatalogBinding.of(x.f.spark, ViewFaultsFixture.DIRECT).locate(List.of(w.ns, table),
        "table");
  }

  private static Map<String, String> schemaMetadata(CatalogBinding.TableLocation t) {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(a, t.location(),
        new ReadOptions.Builder().setStorageOptions(t.storageOptions()).build())) {
      return ds.getSchema().getCustomMetadata();
    }
  }

  /** Writes schema metadata onto the view table the way the engine does (one commit). */
  private static void writeMetadata(World w, String view, Map<String, String> md) {
    CatalogBinding.TableLocation t = locate(w, view);
    long version = w.version(view);
    ViewCommit.builder(t.location(), version).storageOptions(t.storageOptions())
        .schemaMetadata(md).build().commit();
  }

  // ---------------------------------------------------------------- envelope tampering

  @Test
  void anEnvelopeAlteredOnTheStoredViewIsRefused() throws Exception {
    String v = "tampered_env";
    shared.create(Kind.CHUNKER, v);
    String envelope = schemaMetadata(locate(shared, v)).get(GenevaLayout.CHUNKER);
    ObjectMapper json = new ObjectMapper();
    ObjectNode n = (ObjectNode) json.readTree(Base64.getDecoder().decode(envelope));
    n.put("class_name", "com.example.Evil");
    writeMetadata(shared, v, Map.of(GenevaLayout.CHUNKER,
        Base64.getEncoder().encodeToString(json.writeValueAsBytes(n))));
    shared.insert(3);
    EnvelopeChecksumException e = refusedUnchanged(shared, v, EnvelopeChecksumException.class,
        () -> refresh(shared, v));
    assertTrue(e.getMessage().startsWith("udtf_spec.udtf_sha '"), e.getMessage());
    assertTrue(e.getMessage().contains("' does not match: the SHA-256 of the decoded envelope "
        + "is '"), e.getMessage());
    assertTrue(e.getMessage().endsWith("The envelope was altered or the checksum computed over "
        + "other bytes (it must hash the decoded JSON bytes, not the base64 text)"),
        e.getMessage());
  }

  @Test
  void aChecksumAlteredOnTheStoredViewIsRefused() {
    String v = "tampered_sha";
    shared.create(Kind.UDTF, v);
    writeMetadata(shared, v, Map.of(GenevaLayout.UDTF_SHA, "ab".repeat(32)));
    shared.insert(3);
    EnvelopeChecksumException e = refusedUnchanged(shared, v, EnvelopeChecksumException.class,
        () -> refresh(shared, v));
    assertTrue(e.getMessage().startsWith("udtf_spec.udtf_sha '" + "ab".repeat(32)
        + "' does not match: the SHA-256 of the decoded envelope is '"), e.getMessage());
  }

  // ---------------------------------------------------------------- function output

  static Stream<Arguments> badOutputs() {
    return ViewFaultsFixture.subset(Stream.of(
        Arguments.of(Kind.CHUNKER, "null", ChunkerOutputException.class,
            "Chunker 'Splitter' emitted null in non-nullable column 'chunk' (source row id "),
        Arguments.of(Kind.CHUNKER, "wrong_type", ChunkerOutputException.class,
            "Chunker 'Splitter' emitted a java.lang.Integer for column 'chunk' declared Utf8 "
                + "(source row id "),
        Arguments.of(Kind.UDTF, "null", FunctionFailedException.class,
            "UdtfOutputMismatchException: UDTF 'TopK' (io.lancerest.faults.Injected$TopK) for "
                + "partition cat="),
        Arguments.of(Kind.UDTF, "wrong_type", FunctionFailedException.class,
            "UdtfOutputMismatchException: UDTF 'TopK' (io.lancerest.faults.Injected$TopK) for "
                + "partition cat=")).map(a -> Arguments.of(a.get()[0] + " " + a.get()[1],
                    a.get()[0], a.get()[1], a.get()[2], a.get()[3])), "CHUNKER null",
        "UDTF wrong_type");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badOutputs")
  void aFunctionEmittingWrongTypesOrNullsFailsTheRefresh(String name, Kind kind, String bad,
      Class<? extends Exception> type, String message) {
    String v = "out_" + kind.name().toLowerCase() + "_" + bad;
    shared.create(kind, v);
    shared.insert(5);
    Injected.badOutput = bad;
    Exception e = refusedUnchanged(shared, v, type, () -> refresh(shared, v));
    assertTrue(e.getMessage().contains(message), e.getMessage());
    if (kind == Kind.CHUNKER) {
      assertTrue(e.getMessage().endsWith("Fix the chunker or its declared output schema"),
          e.getMessage());
    } else {
      assertTrue(e.getMessage().contains(bad.equals("null") ? "returned NULL for column 'rank', "
          + "which the declared output schema says is not nullable" : "'rank'"),
          e.getMessage());
      assertTrue(e.getMessage().endsWith("Nothing was committed; the view is unchanged"),
          e.getMessage());
    }
    Injected.disarm();
    assertEquals("DONE", refresh(shared, v).get(0).getString(1));
    shared.assertConverged(kind, v);
  }

  // ---------------------------------------------------------------- source schema changes

  static Stream<Arguments> schemaChanges() {
    Consumer<Dataset> dropName = ds -> ds.dropColumns(List.of("name"));
    Consumer<Dataset> dropScore = ds -> ds.dropColumns(List.of("score"));
    return ViewFaultsFixture.subset(Stream.of(
        Arguments.of("QUERY name dropped", Kind.QUERY, dropName, "name"),
        Arguments.of("CHUNKER name dropped", Kind.CHUNKER, dropName, "name"),
        Arguments.of("UDTF score dropped", Kind.UDTF, dropScore, "score")),
        "QUERY name dropped", "UDTF score dropped");
  }

  private static void alterSource(World w, Consumer<Dataset> change) {
    CatalogBinding.TableLocation src = locate(w, "src");
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(a, src.location(),
        new ReadOptions.Builder().setStorageOptions(src.storageOptions()).build())) {
      change.accept(ds);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("schemaChanges")
  void aDroppedSourceColumnIsRefusedWithWhatToDo(String name, Kind kind,
      Consumer<Dataset> change, String column) {
    World w = x.new World("schema").insert(20);
    w.create(kind, "v");
    alterSource(w, change);
    InvalidViewDefinitionException e = refusedUnchanged(w, "v",
        InvalidViewDefinitionException.class, () -> refresh(w, "v"));
    assertTrue(e.getMessage().startsWith("View lance." + w.ns + ".v no longer fits its source "
        + "table " + w.ns + ".src: [UNRESOLVED_COLUMN.WITH_SUGGESTION] A column or function "
        + "parameter with name `" + column + "` cannot be resolved."), e.getMessage());
    assertTrue(e.getMessage().endsWith(". A column its SELECT reads was dropped, renamed or "
        + "changed since the view was created; nothing was committed. Recreate the view (DROP "
        + "MATERIALIZED VIEW, then CREATE MATERIALIZED VIEW) over the new schema"),
        e.getMessage());
  }

  // ---------------------------------------------------------------- definitions stored unchecked

  /**
   * Rewrites the stored SELECT of {@code view} with {@code filter} added to its WHERE, as a
   * version of the engine that did not refuse functions of the clock stored it: the definition's
   * JSON in the view table's schema metadata, changed and committed, with nothing checked.
   */
  private static void storeUncheckedFilter(World w, String view, String filter)
      throws Exception {
    ObjectMapper json = new ObjectMapper();
    ObjectNode q = (ObjectNode) json.readTree(schemaMetadata(locate(w, view))
        .get(GenevaLayout.QUERY));
    String was = q.path("filter").isTextual() ? q.path("filter").asText() : null;
    q.put("filter", was == null ? filter : "(" + was + ") AND (" + filter + ")");
    writeMetadata(w, view, Map.of(GenevaLayout.QUERY, json.writeValueAsString(q)));
  }

  private static String clockRefusal(String view, String use, String function) {
    return "View " + view + " cannot be refreshed: its SELECT uses " + use + ", whose value "
        + "changes between refreshes: the view could not equal its SELECT after a refresh, since "
        + "a refresh computes only the source rows that changed and the rows the view holds keep "
        + "the value of an earlier one. CREATE refuses such a SELECT; this view was stored "
        + "without that check, and nothing was committed. Re-create the view without " + function
        + " (DROP MATERIALIZED VIEW " + view + ", then CREATE MATERIALIZED VIEW): compare with a "
        + "literal you move yourself (e.g. ts > TIMESTAMP '2025-01-01 00:00:00', re-creating the "
        + "view to move it), or keep the rows in the view and filter or compute at query time "
        + "(e.g. SELECT * FROM " + view + " WHERE ts > current_timestamp() - INTERVAL 7 DAYS)";
  }

  /** The last job of {@code view} once it has ended; fails after 60 s naming what it saw. */
  private static JobRecord endedJob(World w, String view, String jobId) throws Exception {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
    JobRecord last = null;
    while (System.nanoTime() < deadline) {
      last = x.f.views().job(jobId);
      if (last != null && last.status().ended()) {
        return last;
      }
      Thread.sleep(50);
    }
    throw new AssertionError("job " + jobId + " of " + w.view(ViewFaultsFixture.DIRECT, view)
        + " did not end within 60 s; last seen: " + last);
  }

  /**
   * A view stored with a function of the clock in its SELECT, before CREATE refused one, would
   * drift from its SELECT at every refresh: every kind's REFRESH, ASYNC or not, refuses it with
   * what to do and commits nothing, the job log records the refusal, and EXPLAIN REFRESH gives
   * the same answer.
   */
  @ParameterizedTest
  @EnumSource(Kind.class)
  void aViewStoredWithAFunctionOfTheClockIsRefusedAtEveryRefresh(Kind kind) throws Exception {
    String v = "clock_" + kind.name().toLowerCase();
    String view = shared.create(kind, v);
    storeUncheckedFilter(shared, v, "timestamp_seconds(id) > current_timestamp() - INTERVAL 7 "
        + "DAYS");
    shared.insert(3);
    String refusal = clockRefusal(view, "current_timestamp() in WHERE", "current_timestamp()");

    assertEquals(refusal, refusedUnchanged(shared, v, InvalidViewDefinitionException.class,
        () -> refresh(shared, v)).getMessage());
    JobRecord job = x.f.views().jobs(List.of(shared.ns, v), 1).get(0);
    assertEquals(List.of(JobStatus.FAILED, refusal), List.of(job.status(), job.message()),
        job.toString());

    assertEquals(refusal, refusedUnchanged(shared, v, InvalidViewDefinitionException.class,
        () -> x.f.sql("EXPLAIN REFRESH MATERIALIZED VIEW " + view)).getMessage());

    long version = shared.version(v);
    List<String> rows = shared.rows(v);
    Row submitted = x.f.sql("REFRESH MATERIALIZED VIEW " + view + " ASYNC WITH (job_id = '" + v
        + "-async')").get(0);
    assertEquals(List.of(v + "-async", "RUNNING"), List.of(submitted.get(0), submitted.get(1)));
    JobRecord async = endedJob(shared, v, v + "-async");
    assertEquals(List.of(JobStatus.FAILED, refusal), List.of(async.status(), async.message()),
        async.toString());
    assertEquals(version, shared.version(v), "a version was committed");
    assertEquals(rows, shared.rows(v), "the view's rows changed");
  }

  /** An aggregate view's HAVING is part of its SELECT: the refusal names it. */
  @Test
  void anAggregateViewStoredWithTheClockInItsHavingIsRefused() throws Exception {
    String v = "clock_having";
    String view = shared.view(ViewFaultsFixture.DIRECT, v);
    x.f.sql("CREATE MATERIALIZED VIEW " + view + " AS SELECT cat, count(*) AS n FROM "
        + shared.src + " GROUP BY cat");
    ObjectMapper json = new ObjectMapper();
    ObjectNode q = (ObjectNode) json.readTree(schemaMetadata(locate(shared, v))
        .get(GenevaLayout.QUERY));
    ((ObjectNode) q.path("aggregation")).put("having", "n > dayofmonth(current_date()) - 100");
    writeMetadata(shared, v, Map.of(GenevaLayout.QUERY, json.writeValueAsString(q)));
    shared.insert(3);
    assertEquals(clockRefusal(view, "current_date() in HAVING", "current_date()"),
        refusedUnchanged(shared, v, InvalidViewDefinitionException.class,
            () -> refresh(shared, v)).getMessage());
  }

  /**
   * A changed column type. lance-core 4.0.0's {@code alterColumns(castTo)} leaves the type as it
   * was (measured: int32 stays int32), so the type changes the way a user can change it: the
   * source is dropped and created again under the same name with {@code score STRING}, and
   * filled with other rows.
   */
  private static void replaceSourceWithStringScore(World w) {
    x.f.sql("DROP TABLE " + w.src + " PURGE");
    x.f.sql("CREATE TABLE " + w.src + " (id BIGINT, name STRING, cat STRING, score STRING)");
    for (int i = 0; i < 2; i++) {
      x.f.sql("INSERT INTO " + w.src + " SELECT id + 500, concat('r', id), concat('c', id % 4), "
          + "CAST((id * 37) % 1000 + 1 AS STRING) FROM range(" + i * 10 + ", " + (i * 10 + 10)
          + ")");
    }
  }

  @Test
  void aUdtfViewRefusesASourceColumnThatChangedType() {
    World w = x.new World("retype").insert(20);
    w.create(Kind.UDTF, "v");
    replaceSourceWithStringScore(w);
    FunctionFailedException e = refusedUnchanged(w, "v", FunctionFailedException.class,
        () -> refresh(w, "v"));
    assertTrue(e.getMessage().contains("returned java.lang.String for column 'score'; the "
        + "declared output schema says int, which needs java.lang.Integer. Nothing was "
        + "committed; the view is unchanged"), e.getMessage());
  }

  /**
   * A source dropped and created again under the same name restarts its versions and row ids:
   * every kind rebuilds the view in full from the new table, even at the very version number
   * the view reflects ({@code KindRulesTest} has the other cases).
   */
  @ParameterizedTest
  @EnumSource(Kind.class)
  void aSourceReplacedUnderTheSameNameIsRebuilt(Kind kind) {
    World w = x.new World("replaced" + kind.ordinal()).insert(20);
    w.create(kind, "v");
    long oldSourceVersion = w.version("src");
    List<String> before = w.rows("v");
    x.f.sql("DROP TABLE " + w.src + " PURGE");
    x.f.sql("CREATE TABLE " + w.src + " (id BIGINT, name STRING, cat STRING, score INT)");
    w.next = 500;
    w.insert(10);
    assertEquals(oldSourceVersion, w.version("src"));
    long version = w.version("v");
    refresh(w, "v");
    assertEquals(version + 1, w.version("v"), "one rebuild was committed");
    assertFalse(before.equals(w.rows("v")), "the view still holds the old table's rows");
    w.assertConverged(kind, "v");
  }

  // ---------------------------------------------------------------- validation

  private static void refusedAtCreate(String view, Class<? extends Exception> type,
      String message, String statement) {
    Exception e = assertThrows(type, () -> x.f.sql(statement));
    assertTrue(e.getMessage().startsWith(message), e.getMessage());
    assertFalse(x.f.spark.catalog().tableExists(shared.view(ViewFaultsFixture.DIRECT, view)),
        view + " exists");
  }

  @Test
  void validationCases() {
    String src = shared.src;
    String ns = shared.ns;
    String p = "CREATE MATERIALIZED VIEW lance." + ns + ".";
    String v = "lance." + ns + ".";
    refusedAtCreate("c_limit", InvalidViewDefinitionException.class, "Chunker view " + v
        + "c_limit cannot LIMIT its source rows; cap its rows with the refresh option "
        + "output_limit", p + "c_limit USING CHUNKER 'io.lancerest.faults.Injected$Splitter'"
        + " OPTIONS (input_columns = 'name', chunk_size = 6) AS SELECT id, name FROM " + src
        + " LIMIT 5");
    refusedAtCreate("c_ol", InvalidOptionException.class, "output_limit must be a whole "
        + "number, got 'lots'", p + "c_ol USING CHUNKER 'io.lancerest.faults.Injected$Splitter'"
        + " OPTIONS (input_columns = 'name', chunk_size = 6, output_limit = 'lots') AS SELECT "
        + "id, name FROM " + src);
    refusedAtCreate("c_in", InvalidViewDefinitionException.class, "input_columns names "
        + "'nope', which is not a column of the SELECT of view " + v + "c_in [id, name]", p + "c_in USING CHUNKER 'io.lancerest.faults.Injected$Splitter'"
        + " OPTIONS (input_columns = 'nope', chunk_size = 6) AS SELECT id, name FROM " + src);
    refusedAtCreate("c_eh", InvalidViewDefinitionException.class, "error_handling is not "
        + "valid JSON of its format: ", p + "c_eh USING CHUNKER 'io.lancerest.faults.Injected$Splitter'"
        + " OPTIONS (input_columns = 'name', chunk_size = 6, error_handling = '{\"rules\": 5}') "
        + "AS SELECT id, name FROM " + src);
    refusedAtCreate("u_os", InvalidViewDefinitionException.class, "output_schema of view " + v
        + "u_os is neither Spark DDL ('a STRING, b INT') nor Arrow JSON: ", p + "u_os USING UDTF 'io.lancerest.faults.Injected$TopK' OPTIONS "
        + "(order_by = 'score', output_schema = 'id BIGINT, rank') AS SELECT id, cat, score "
        + "FROM " + src);
    refusedAtCreate("q_cat", InvalidViewDefinitionException.class, "The source of view " + v
        + "q_cat is in catalog 'flaky'; a materialized view reads a table of its own catalog "
        + "'lance'", p + "q_cat AS SELECT id FROM flaky." + ns + ".src");
    refusedAtCreate("q_ns", MaterializedViewNotFoundException.class, "Cannot create "
        + "materialized view lance.no_such_ns.q_ns: its namespace does not exist. Create it "
        + "first (CREATE NAMESPACE)", "CREATE MATERIALIZED VIEW lance.no_such_ns.q_ns AS SELECT id FROM "
        + src);
  }

  @Test
  void refreshOptionsThatDoNotFitTheView() {
    String q = "r_query";
    shared.create(Kind.QUERY, q);
    String u = "r_udtf";
    shared.create(Kind.UDTF, u);
    String c = "r_chunker";
    shared.create(Kind.CHUNKER, c);
    String r = "REFRESH MATERIALIZED VIEW lance." + shared.ns + ".";
    assertEquals("output_limit caps the rows of a chunker view; this view is a query view. "
        + "Remove output_limit (use the source query's LIMIT for a query view)",
        refusedUnchanged(shared, q, InvalidOptionException.class, () -> x.f.sql(r + q
            + " WITH (output_limit = 5)")).getMessage());
    long latest = shared.version("src");
    String future = " WITH (src_version = 999)";
    // the same rule and the same words for every kind
    for (String v : List.of(q, u, c)) {
      assertEquals("src_version 999 does not exist: the source of view lance." + shared.ns + "."
          + v + " is at version " + latest + " (give 1 to " + latest + ", or omit src_version "
          + "for the latest)", refusedUnchanged(shared, v, InvalidOptionException.class,
              () -> x.f.sql(r + v + future)).getMessage());
    }
    assertEquals("Materialized view lance." + shared.ns + ".missing does not exist",
        assertThrows(MaterializedViewNotFoundException.class, () -> x.f.sql(r + "missing"))
            .getMessage());
  }
}
