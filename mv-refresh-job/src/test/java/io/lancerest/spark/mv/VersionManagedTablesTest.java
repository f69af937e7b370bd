package io.lancerest.spark.mv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lancerest.client.LanceJson;
import io.lancerest.client.error.ConflictException;
import io.lancerest.spark.LanceRestSparkExtensions;
import io.lancerest.spark.catalog.ForwardingProxy;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.engine.CatalogBinding;
import io.lancerest.spark.mv.engine.EngineFixture;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.error.VersionManagedTableException;
import io.lancerest.spark.mv.result.JobRecord;
import io.lancerest.spark.mv.server.MaterializedViewServer;
import io.lancerest.spark.mv.server.ServerConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.lance.spark.extensions.LanceSparkSessionExtensions;

/**
 * Tables whose versions the namespace server manages ({@code managed_versioning=true}) are never
 * changed behind the server's back: the client-side view engine, which commits views and job
 * records in storage and reads the source's versions from storage, refuses every statement that
 * would touch one, by every way in (SQL, the Java API, the refresh job, the view service), and
 * leaves everything as it was. The directory server does not manage versions; a {@link
 * ForwardingProxy} in front of it answers DescribeTable for the tables a test names as such a
 * server would.
 */
class VersionManagedTablesTest {
  private static final String MANAGED = "has its versions managed by the namespace server "
      + "(managed_versioning=true)";
  private static final String KEEP_VIEW = "Keep the view and its source in a namespace whose "
      + "server does not manage table versions, or have the view kept by a server that "
      + "implements the materialized-view routes (CreateMaterializedView, "
      + "RefreshMaterializedView; catalog option mv.mode = auto or server).";
  private static final String KEEP_LOG = "Point the job log at a namespace whose server does "
      + "not manage table versions (spark.lancerest.mv.jobs.namespace), or turn it off "
      + "(spark.lancerest.mv.jobs.enabled = false).";

  static EngineFixture f;
  static ForwardingProxy proxy;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
    proxy = new ForwardingProxy(f.uri, f.root.toUri().toString(), false, 0);
    // before the catalog's first use: every request of the session goes through the proxy
    f.spark.conf().set("spark.sql.catalog." + EngineFixture.CATALOG + ".uri", proxy.uri());
  }

  @AfterAll
  static void stop() throws IOException {
    try {
      if (f != null) {
        f.close();
      }
    } finally {
      if (proxy != null) {
        proxy.close();
      }
    }
  }

  /** A source {@code ns.src} of three rows in a new namespace. */
  private static String source(String prefix) {
    String ns = f.namespace(prefix);
    f.sql("CREATE TABLE lance." + ns + ".src (id BIGINT, name STRING)");
    f.sql("INSERT INTO lance." + ns + ".src VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    return ns;
  }

  /** A source and its view {@code ns.v}, one row behind: a refresh would commit. */
  private static String viewBehind(String prefix) {
    String ns = source(prefix);
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".v AS " + select(ns));
    f.sql("INSERT INTO lance." + ns + ".src VALUES (4, 'd')");
    return ns;
  }

  private static String select(String ns) {
    return "SELECT id, upper(name) AS n FROM lance." + ns + ".src";
  }

  private static CreateViewRequest request(String ns, String view, boolean withData) {
    return new CreateViewRequest(List.of(ns, view), false, MaterializedViewKind.QUERY,
        select(ns), null, null, null, null, null, null, withData);
  }

  private static boolean exists(String ns, String table) {
    try {
      CatalogBinding.of(f.spark, EngineFixture.CATALOG).locate(List.of(ns, table), "table");
      return true;
    } catch (MaterializedViewNotFoundException e) {
      return false;
    }
  }

  private static long version(String ns, String table) {
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = CatalogBinding.of(f.spark, EngineFixture.CATALOG)
            .locate(List.of(ns, table), "table").dataset().open(a, null)) {
      return ds.version();
    }
  }

  /** The job log's rows (its own maintenance may compact it, never changes its rows). */
  private static long logRows() {
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = CatalogBinding.of(f.spark, EngineFixture.CATALOG)
            .locate(List.of("__system", "mv_jobs"), "job log").dataset().open(a, null)) {
      return ds.countRows();
    }
  }

  private static List<JobRecord> jobs(String ns) {
    return f.views().jobs(List.of(ns, "v"), 1000);
  }

  /** The refusal {@code call} throws; its message must start with {@code start}. */
  private static String refused(Executable call, String start) {
    VersionManagedTableException e = assertThrows(VersionManagedTableException.class, call);
    assertTrue(e.getMessage().startsWith(start), "the message starts with '" + start
        + "': " + e.getMessage());
    return e.getMessage();
  }

  /**
   * A new session with the catalog's configuration: its catalog, and so its job log, is new (a
   * catalog describes its job log once, at the first refresh it records). Closed with the
   * fixture.
   */
  private static SparkSession freshSession() {
    return f.sessionWith(new LanceRestSparkExtensions(), new LanceSparkSessionExtensions());
  }

  /** {@code sql} in session {@code s}, collected. */
  private static List<org.apache.spark.sql.Row> sql(SparkSession s, String sql) {
    SparkSession.setActiveSession(s);
    try {
      return s.sql(sql).collectAsList();
    } finally {
      SparkSession.setActiveSession(f.spark);
    }
  }

  @Test
  void createOverASourceWhoseVersionsTheServerManagesIsRefusedAndCreatesNothing() {
    String ns = source("mvs_src_create");
    proxy.managedVersioning(ns + "$src", true);
    try {
      String v = "lance." + ns + ".v";
      String m = refused(() -> f.sql("CREATE MATERIALIZED VIEW " + v + " AS " + select(ns)),
          "CREATE MATERIALIZED VIEW " + v + " is refused: its source table lance." + ns
              + ".src " + MANAGED + ", which decides which version of it is current; the "
              + "view engine reads the source's versions from storage, not from the server, "
              + "so it could refresh from a version the server never made current. "
              + KEEP_VIEW + " Nothing was created.");
      assertFalse(m.contains("\n"), m);
      refused(() -> f.views().create(request(ns, "v", false)), "CREATE MATERIALIZED VIEW " + v
          + " is refused: its source table lance." + ns + ".src " + MANAGED);
      assertFalse(exists(ns, "v"), "no view table was created");
    } finally {
      proxy.managedVersioning(ns + "$src", false);
    }
  }

  @Test
  void createWhoseNewViewTableTheServerVersionsIsRefusedAndTheTableDroppedAgain() {
    String ns = source("mvs_view_create");
    proxy.managedVersioning(ns + "$v", true);
    try {
      String v = "lance." + ns + ".v";
      refused(() -> f.sql("CREATE MATERIALIZED VIEW " + v + " AS " + select(ns)),
          "CREATE MATERIALIZED VIEW " + v + " is refused: the view's table " + v + " " + MANAGED
              + ", so every new version of it must go through the server's table-version "
              + "operations; the view engine commits to the view table in storage itself "
              + "(refresh, compaction, cleanup), which would change it behind the server's "
              + "back. " + KEEP_VIEW + " The table created for it is dropped again, with "
              + "nothing committed to it.");
      assertFalse(exists(ns, "v"), "the view table is gone");
    } finally {
      proxy.managedVersioning(ns + "$v", false);
    }
  }

  @Test
  void everyWayToRefreshOrOptimizeAViewWhoseTableTheServerVersionsIsRefused() throws Exception {
    String ns = viewBehind("mvs_view");
    String v = "lance." + ns + ".v";
    long viewVersion = version(ns, "v");
    int jobs = jobs(ns).size();
    proxy.managedVersioning(ns + "$v", true);
    try {
      String why = "the view's table " + v + " " + MANAGED + ", so every new version of it "
          + "must go through the server's table-version operations";
      String m = refused(() -> f.sql("REFRESH MATERIALIZED VIEW " + v),
          "REFRESH MATERIALIZED VIEW " + v + " is refused: " + why);
      assertTrue(m.endsWith(KEEP_VIEW + " Nothing was refreshed."), m);
      refused(() -> f.views().refresh(List.of(ns, "v"), RefreshOptions.DEFAULTS),
          "REFRESH MATERIALIZED VIEW " + v + " is refused: " + why);
      refused(() -> f.sql("REFRESH MATERIALIZED VIEW " + v + " ASYNC"),
          "REFRESH MATERIALIZED VIEW " + v + " ASYNC is refused: " + why);
      m = refused(() -> f.sql("EXPLAIN REFRESH MATERIALIZED VIEW " + v),
          "EXPLAIN REFRESH: REFRESH MATERIALIZED VIEW " + v + " would be refused: " + why);
      assertTrue(m.endsWith(KEEP_VIEW), m);
      m = refused(() -> f.sql("OPTIMIZE MATERIALIZED VIEW " + v),
          "OPTIMIZE MATERIALIZED VIEW " + v + " is refused: " + why);
      assertTrue(m.endsWith(" Nothing was compacted or removed."), m);

      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      int rc = RefreshJob.run(new String[] {"--uri", proxy.uri(), "--view", ns + ".v"},
          new PrintStream(out, true, StandardCharsets.UTF_8),
          new PrintStream(err, true, StandardCharsets.UTF_8), RefreshJob::runInSpark);
      String said = err.toString(StandardCharsets.UTF_8);
      // a configuration error, as a bad flag: a scheduler does not retry it
      assertEquals(RefreshJob.USAGE, rc, said);
      assertTrue(said.startsWith("refresh-job: refused: REFRESH MATERIALIZED VIEW "
          + RefreshJob.CATALOG + "." + ns + ".v is refused: the view's table "
          + RefreshJob.CATALOG + "." + ns + ".v " + MANAGED), said);

      assertEquals(viewVersion, version(ns, "v"), "nothing was committed to the view");
      assertEquals(jobs, jobs(ns).size(), "no job was recorded: " + jobs(ns));
    } finally {
      proxy.managedVersioning(ns + "$v", false);
    }
    // the same view refreshes once its server no longer manages its versions
    assertEquals("DONE", f.sql("REFRESH MATERIALIZED VIEW " + v).get(0).getString(1));
    assertEquals(f.rows(select(ns)), f.rows("SELECT id, n FROM " + v));
  }

  @Test
  void refreshingFromASourceWhoseVersionsTheServerManagesIsRefused() {
    String ns = viewBehind("mvs_src");
    String v = "lance." + ns + ".v";
    long viewVersion = version(ns, "v");
    int jobs = jobs(ns).size();
    proxy.managedVersioning(ns + "$src", true);
    try {
      String why = "its source table lance." + ns + ".src " + MANAGED + ", which decides which "
          + "version of it is current";
      refused(() -> f.sql("REFRESH MATERIALIZED VIEW " + v),
          "REFRESH MATERIALIZED VIEW " + v + " is refused: " + why);
      refused(() -> f.sql("REFRESH MATERIALIZED VIEW " + v + " ASYNC"),
          "REFRESH MATERIALIZED VIEW " + v + " ASYNC is refused: " + why);
      refused(() -> f.sql("EXPLAIN REFRESH MATERIALIZED VIEW " + v),
          "EXPLAIN REFRESH: REFRESH MATERIALIZED VIEW " + v + " would be refused: " + why);
      assertEquals(viewVersion, version(ns, "v"), "nothing was committed to the view");
      assertEquals(jobs, jobs(ns).size(), "no job was recorded: " + jobs(ns));
    } finally {
      proxy.managedVersioning(ns + "$src", false);
    }
  }

  @Test
  void aJobLogWhoseVersionsTheServerManagesRefusesRefreshesAndCreatesWithData() {
    String ns = viewBehind("mvs_log");
    String v = "lance." + ns + ".v";
    long viewVersion = version(ns, "v");
    String log = "lance.__system.mv_jobs";
    long logRows = logRows();
    proxy.managedVersioning("__system$mv_jobs", true);
    SparkSession other = freshSession();
    try {
      String why = "the job log " + log + " " + MANAGED + "; the engine appends each refresh's "
          + "job to it in storage itself, which would change it behind the server's back. "
          + KEEP_LOG;
      refused(() -> sql(other, "REFRESH MATERIALIZED VIEW " + v),
          "REFRESH MATERIALIZED VIEW " + v + " is refused: " + why + " Nothing was refreshed.");
      refused(() -> sql(other, "REFRESH MATERIALIZED VIEW " + v + " ASYNC"),
          "REFRESH MATERIALIZED VIEW " + v + " ASYNC is refused: " + why);
      refused(() -> sql(other, "EXPLAIN REFRESH MATERIALIZED VIEW " + v),
          "EXPLAIN REFRESH: REFRESH MATERIALIZED VIEW " + v + " would be refused: " + why);
      refused(() -> sql(other, "CREATE MATERIALIZED VIEW lance." + ns + ".w AS " + select(ns)),
          "CREATE MATERIALIZED VIEW lance." + ns + ".w is refused: " + why
              + " Nothing was created.");
      assertFalse(exists(ns, "w"), "no view table was created");
      // WITH NO DATA records no job
      sql(other, "CREATE MATERIALIZED VIEW lance." + ns + ".w AS " + select(ns)
          + " WITH NO DATA");
      assertTrue(exists(ns, "w"));
      assertEquals(viewVersion, version(ns, "v"), "nothing was committed to the view");
      assertEquals(logRows, logRows(), "nothing appended to the log");
    } finally {
      proxy.managedVersioning("__system$mv_jobs", false);
    }
  }

  @Test
  void aJobLogCreatedOnlyToFindItsVersionsManagedIsDroppedAgain() {
    String ns = viewBehind("mvs_new_log");
    // a catalog of its own, whose job log is another table, not there yet
    SparkSession other = freshSession();
    other.conf().set("spark.lancerest.mv.jobs.table", "mv_jobs_" + ns);
    proxy.managedVersioning("__system$mv_jobs_" + ns, true);
    try {
      refused(() -> MaterializedViews.forCatalog(other, EngineFixture.CATALOG)
          .refresh(List.of(ns, "v"), RefreshOptions.DEFAULTS), "REFRESH MATERIALIZED VIEW "
          + "lance." + ns + ".v is refused: the job log lance.__system.mv_jobs_" + ns + " "
          + MANAGED);
      assertFalse(exists("__system", "mv_jobs_" + ns), "the job log made for nothing is gone");
      assertEquals(List.of(), MaterializedViews.forCatalog(other, EngineFixture.CATALOG)
          .jobs(List.of(ns, "v"), 10), "SHOW JOBS of that catalog: a log not there is empty");
    } finally {
      proxy.managedVersioning("__system$mv_jobs_" + ns, false);
      SparkSession.setActiveSession(f.spark);
    }
  }

  /**
   * A log another driver created and found managed (it drops it again) is not kept by this
   * catalog either: once it is gone, SHOW JOBS reads an empty log, not a dropped table.
   */
  @Test
  void aManagedJobLogAnotherDriverCreatedIsNotKeptOnceRefused() {
    String ns = viewBehind("mvs_other_log");
    String table = "mv_jobs_" + ns;
    // the other driver's log, there before this catalog looks for it
    f.sql("CREATE TABLE lance.__system." + table + " (job_id STRING)");
    SparkSession other = freshSession();
    other.conf().set("spark.lancerest.mv.jobs.table", table);
    proxy.managedVersioning("__system$" + table, true);
    try {
      MaterializedViews views = MaterializedViews.forCatalog(other, EngineFixture.CATALOG);
      refused(() -> views.refresh(List.of(ns, "v"), RefreshOptions.DEFAULTS),
          "REFRESH MATERIALIZED VIEW lance." + ns + ".v is refused: the job log lance.__system."
              + table + " " + MANAGED);
      // the other driver drops what it made, as it does (with its data)
      f.sql("DROP TABLE lance.__system." + table + " PURGE");
      assertEquals(List.of(), views.jobs(List.of(ns, "v"), 10),
          "SHOW JOBS of that catalog: the log is not there");
    } finally {
      proxy.managedVersioning("__system$" + table, false);
      SparkSession.setActiveSession(f.spark);
    }
  }

  /**
   * The view service refuses at once, with a 409 worded for its caller (the names it uses, no
   * catalog of the service, what the caller can do), what its engine would refuse: a CREATE
   * over a managed source, a CREATE WITH DATA while its job log is managed, a REFRESH of a
   * managed view (nothing queued); an auto-mode Spark client pointed at it shows that message.
   */
  @Test
  void theViewServiceAnswersA409ForTablesWhoseVersionsItsUpstreamManages() throws Exception {
    String ns = source("mvs_service");
    String withData = LanceJson.mapper().writeValueAsString(
        f.views().createRequest(request(ns, "v", true)).withNoData(false));
    String noData = LanceJson.mapper().writeValueAsString(
        f.views().createRequest(request(ns, "v", false)).withNoData(true));
    SparkSession served = freshSession();
    // before the service starts, which reads its job log: a catalog keeps a log not managed
    proxy.managedVersioning("__system$mv_jobs", true);
    MaterializedViewServer service;
    try {
      service = MaterializedViewServer.start(served,
          ServerConfig.parse(new String[] {"--upstream", proxy.uri(), "--port", "0"}));
    } catch (RuntimeException e) {
      proxy.managedVersioning("__system$mv_jobs", false);
      throw e;
    }
    String uri = "http://127.0.0.1:" + service.port();
    String base = uri + "/v1/materialized_view/" + ns + "$v";
    String upstreamRemedy = "The upstream manages this table's versions; keep the view and its "
        + "source in a namespace whose tables it does not manage.";
    String upstreamManaged = "has its versions managed by the upstream namespace server "
        + "(managed_versioning=true)";
    try {
      try {
        JsonNode a = post(base + "/create", withData, 409);
        assertEquals(19, a.path("code").asInt(-1), a.toString());
        assertEquals("CREATE MATERIALIZED VIEW " + ns + ".v is refused: the service's job log "
            + "__system.mv_jobs " + upstreamManaged + ", and the service appends each "
            + "refresh's job to it in storage itself. The service's operator must point its "
            + "job log at a namespace whose tables the upstream does not manage "
            + "(spark.lancerest.mv.jobs.namespace). Nothing was created.",
            a.path("error").asText(), a.toString());
        assertFalse(exists(ns, "v"), "no view table was created: its first refresh, queued, "
            + "could not record its job");
      } finally {
        proxy.managedVersioning("__system$mv_jobs", false);
      }

      proxy.managedVersioning(ns + "$src", true);
      try {
        JsonNode a = post(base + "/create", withData, 409);
        assertEquals(19, a.path("code").asInt(-1), a.toString());
        assertEquals("CREATE MATERIALIZED VIEW " + ns + ".v is refused: its source table " + ns
            + ".src " + upstreamManaged + ", which decides which version of it is current; "
            + "this service reads the source's versions from storage, not from the upstream. "
            + upstreamRemedy + " Nothing was created.", a.path("error").asText(), a.toString());
      } finally {
        proxy.managedVersioning(ns + "$src", false);
      }
      assertFalse(exists(ns, "v"), "no view table was created");

      post(base + "/create", noData, 201);
      proxy.managedVersioning(ns + "$v", true);
      try {
        JsonNode a = post(base + "/refresh", "{}", 409);
        assertEquals(19, a.path("code").asInt(-1), a.toString());
        String refused = "REFRESH MATERIALIZED VIEW " + ns + ".v is refused: the view's table "
            + ns + ".v " + upstreamManaged + ", so every new version of it must go through "
            + "the upstream's table-version operations; this service commits the view in "
            + "storage itself. " + upstreamRemedy + " No job was queued.";
        assertEquals(refused, a.path("error").asText(), a.toString());
        assertEquals(0, post(base + "/job/list", "{}", 200).path("jobs").size(),
            "no job was queued");

        // what a Spark client of the service (mv.mode = auto, the default) is told
        SparkSession client = freshSession();
        client.conf().set("spark.sql.catalog.svc", "io.lancerest.spark.catalog.LanceRestCatalog");
        client.conf().set("spark.sql.catalog.svc.uri", uri);
        ConflictException e = assertThrows(ConflictException.class,
            () -> sql(client, "REFRESH MATERIALIZED VIEW svc." + ns + ".v"));
        assertEquals("RefreshMaterializedView '" + ns + ".v': the table is in a state that "
            + "does not allow this operation (server said: " + refused + ") [HTTP 409, code 19]",
            e.getMessage());
        assertEquals(0, post(base + "/job/list", "{}", 200).path("jobs").size(),
            "no job was queued");
      } finally {
        proxy.managedVersioning(ns + "$v", false);
      }
    } finally {
      service.close();
      SparkSession.setActiveSession(f.spark);
    }
  }

  private static final OkHttpClient HTTP = new OkHttpClient.Builder()
      .readTimeout(120, TimeUnit.SECONDS).build();

  /** POSTs {@code body}; the answer must have {@code status}. */
  private static JsonNode post(String url, String body, int status) throws IOException {
    try (Response r = HTTP.newCall(new Request.Builder().url(url).post(RequestBody.create(
        body.getBytes(StandardCharsets.UTF_8), MediaType.get("application/json"))).build())
        .execute()) {
      String text = r.body() == null ? "" : r.body().string();
      assertEquals(status, r.code(), url + ": " + text);
      return LanceJson.mapper().readTree(text.isEmpty() ? "{}" : text);
    }
  }
}
