package io.lancerest.spark.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.error.ClientConfigException;
import io.lancerest.client.error.ServiceUnavailableException;
import io.lancerest.client.model.DescribeTableRequest;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import okhttp3.mockwebserver.MockResponse;
import okhttp3.mockwebserver.MockWebServer;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What is measured rather than listed in the contract: REST calls per query, the cache, secrets,
 * interoperability with lance-spark's own catalog, options, and error propagation.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CatalogBehaviourTest {
  private SharedSpark shared;
  private SparkSession spark;

  @BeforeAll
  void start() {
    shared = SharedSpark.get();
    spark = shared.spark;
  }

  private List<Row> sql(String s) {
    return spark.sql(s).collectAsList();
  }

  private String newTable(String catalog) {
    String ns = catalog + "." + SharedSpark.unique("b");
    sql("CREATE NAMESPACE " + ns);
    sql("CREATE TABLE " + ns + ".t (id BIGINT, name STRING)");
    sql("INSERT INTO " + ns + ".t VALUES (1, 'a'), (2, 'b')");
    return ns + ".t";
  }

  private String describeText(String table) {
    return sql("DESCRIBE TABLE EXTENDED " + table).stream()
        .map(r -> r.getString(0) + "=" + r.getString(1)).collect(Collectors.joining("\n"));
  }

  @Test
  void aSelectCostsAtMostOneDescribeTable() {
    String t = newTable("lance");
    sql("REFRESH TABLE " + t); // leaves the cache cold
    shared.plain.resetCounts();
    assertEquals(2L, sql("SELECT count(*) FROM " + t).get(0).getLong(0));
    assertEquals(1, shared.plain.count("table/describe"), shared.plain.counts().toString());
    shared.plain.resetCounts();
    assertEquals(2, sql("SELECT * FROM " + t + " WHERE id > 0").size());
    assertEquals(0, shared.plain.count("table/describe"),
        "a warm cache answers without the server: " + shared.plain.counts());
  }

  @Test
  void aPlainCountIsAnsweredWithoutASparkJob() {
    String t = newTable("lance");
    sql("INSERT INTO " + t + " VALUES (3, 'c')");
    sql("DELETE FROM " + t + " WHERE id = 1");
    var count = spark.sql("SELECT count(*) FROM " + t);
    String plan = count.queryExecution().executedPlan().toString();
    assertTrue(plan.contains("LocalTableScan") && !plan.contains("Aggregate"), plan);
    assertEquals(2L, count.collectAsList().get(0).getLong(0));
    // Filtered counts are per-fragment partial counts: Spark still sums them.
    var filtered = spark.sql("SELECT count(*) FROM " + t + " WHERE id > 2");
    assertTrue(filtered.queryExecution().executedPlan().toString().contains("Aggregate"));
    assertEquals(1L, filtered.collectAsList().get(0).getLong(0));
    assertEquals("[[2,2,5]]",
        sql("SELECT count(*), min(id), sum(id) FROM " + t).toString());
  }

  @Test
  void withTheCacheDisabledEachSelectDescribesOnce() {
    String t = newTable("lance_nc");
    shared.plain.resetCounts();
    sql("SELECT count(*) FROM " + t);
    assertEquals(1, shared.plain.count("table/describe"), shared.plain.counts().toString());
  }

  @Test
  void refreshTableDropsTheCachedSchema() {
    String t = newTable("lance");
    String other = t.replaceFirst("^lance\\.", "lance_nc.");
    assertEquals(2, spark.table(t).columns().length); // cached in "lance"
    sql("ALTER TABLE " + other + " ADD COLUMNS (extra INT)"); // through another catalog
    assertEquals(2, spark.table(t).columns().length, "still cached");
    sql("REFRESH TABLE " + t);
    assertEquals(3, spark.table(t).columns().length);
  }

  @Test
  void cacheEntriesExpireAfterWriteNotAfterAccess() {
    long[] now = {0};
    TableCache<String> cache = new TableCache<>(java.time.Duration.ofMillis(100),
        () -> now[0]);
    cache.put(List.of("a", "t"), "v1");
    now[0] = 60_000_000L; // 60 ms
    assertEquals("v1", cache.get(List.of("a", "t")));
    now[0] = 100_000_000L; // 100 ms: reads did not extend it
    assertEquals(null, cache.get(List.of("a", "t")));
    TableCache<String> off = new TableCache<>(java.time.Duration.ZERO, () -> 0L);
    off.put(List.of("a"), "x");
    assertEquals(null, off.get(List.of("a")));
  }

  // ---------------------------------------------------------------- interop with lance-spark

  @Test
  void lanceSparksCatalogReadsOurTables() {
    String t = newTable("lance");
    String peer = t.replaceFirst("^lance\\.", "peer.");
    assertEquals(sql("SELECT * FROM " + t + " ORDER BY id").toString(),
        sql("SELECT * FROM " + peer + " ORDER BY id").toString());
    assertEquals(spark.table(t).schema(), spark.table(peer).schema());
  }

  @Test
  void weReadAndWriteLanceSparksTables() {
    String ns = SharedSpark.unique("peerns");
    sql("CREATE NAMESPACE peer." + ns);
    sql("CREATE TABLE peer." + ns + ".p (id BIGINT, name STRING)");
    sql("INSERT INTO peer." + ns + ".p VALUES (5, 'e'), (6, 'f')");
    assertEquals(sql("SELECT * FROM peer." + ns + ".p ORDER BY id").toString(),
        sql("SELECT * FROM lance." + ns + ".p ORDER BY id").toString());
    assertEquals(spark.table("peer." + ns + ".p").schema(),
        spark.table("lance." + ns + ".p").schema());
    sql("INSERT INTO lance." + ns + ".p VALUES (7, 'g')");
    assertEquals(3, sql("SELECT * FROM peer." + ns + ".p").size());
  }

  // ---------------------------------------------------------------- filters lance-spark mis-writes

  /** ids of {@code t} WHERE {@code where}, sorted. */
  private List<Long> ids(String t, String where) {
    return sql("SELECT id FROM " + t + " WHERE " + where + " ORDER BY id").stream()
        .map(r -> r.getLong(0)).toList();
  }

  /** A new table {@code lance.<unique ns>.t} with {@code columns} ("(id BIGINT, ...)"). */
  private String emptyTable(String prefix, String columns) {
    String ns = "lance." + SharedSpark.unique(prefix);
    sql("CREATE NAMESPACE " + ns);
    sql("CREATE TABLE " + ns + ".t " + columns);
    return ns + ".t";
  }

  private boolean filteredBySpark(String t, String where) {
    return spark.sql("SELECT id FROM " + t + " WHERE " + where).queryExecution().executedPlan()
        .toString().contains("Filter ");
  }

  @Test
  void aFieldOfAStructIsReadByItsName() {
    // Spark prunes s.b to struct<b>; lance-spark 0.4.0 then read the struct's first field
    // under that name (the values of a), or failed when the types differed.
    String t = emptyTable("structs", "(id BIGINT, s STRUCT<a: STRING, b: STRING>, "
        + "m STRUCT<x: INT, y: STRING>)");
    sql("INSERT INTO " + t + " VALUES (1, named_struct('a', 'a1', 'b', 'b1'), "
        + "named_struct('x', 10, 'y', 'y1')), (2, named_struct('a', 'a2', 'b', 'b2'), "
        + "named_struct('x', 20, 'y', 'y2'))");
    assertEquals("[[1,b1,y1], [2,b2,y2]]", sql("SELECT id, s.b, m.y FROM " + t
        + " ORDER BY id").toString());
    assertEquals("[[2,a2,20]]", sql("SELECT id, s.a, m.x FROM " + t + " WHERE s.b = 'b2'")
        .toString());
  }

  @Test
  void aStringWithAQuoteIsFilteredBySparkWithSparksRows() {
    // lance-spark 0.4.0 writes the string into Lance's filter unescaped: `name = 'O\'Brien'`
    // failed ("Unterminated string literal"), and `zz' OR 'a'='a` matched every row.
    String t = newTable("lance");
    sql("INSERT INTO " + t + " VALUES (3, 'O\\'Brien'), (4, 'zz'), (5, 'it\\'s'), "
        + "(6, 'a\\\\')");
    assertEquals(List.of(3L), ids(t, "name = 'O\\'Brien'"));
    assertEquals(List.of(3L, 5L), ids(t, "name IN ('O\\'Brien', 'it\\'s')"));
    assertEquals(List.of(1L, 2L, 4L, 5L, 6L), ids(t, "name <> 'O\\'Brien'"));
    assertEquals(List.of(1L, 2L, 4L, 5L, 6L), ids(t, "NOT (name = 'O\\'Brien')"));
    assertEquals(List.of(3L, 4L), ids(t, "name = 'zz' OR name = 'O\\'Brien'"));
    assertEquals(List.of(), ids(t, "name = 'zz\\' OR \\'a\\'=\\'a'"));
    assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L), ids(t, "name <> 'zz\\' OR \\'a\\'=\\'b'"));
    assertEquals(1L, sql("SELECT count(*) FROM " + t + " WHERE name = 'O\\'Brien'").get(0)
        .getLong(0));
    assertTrue(filteredBySpark(t, "name = 'O\\'Brien'"));
    // a backslash needs no escape in Lance's SQL: still pushed down, and right
    assertEquals(List.of(6L), ids(t, "name = 'a\\\\'"));
    assertFalse(filteredBySpark(t, "name = 'a\\\\'"));
    assertFalse(filteredBySpark(t, "name = 'zz'"), "a filter without a quote is pushed down");
  }

  @Test
  void valuesLanceSparkWritesAsOtherLanceValuesAreFilteredBySpark() {
    String t = emptyTable("vals", "(id BIGINT, name STRING, x DOUBLE, d DATE, ts TIMESTAMP)");
    sql("INSERT INTO " + t + " VALUES (1, 'a', CAST('NaN' AS DOUBLE), DATE'2024-01-01', "
        + "TIMESTAMP'2024-01-01 00:00:00'), (2, 'b', 1.5, DATE'2024-01-02', "
        + "TIMESTAMP'2024-01-01 01:00:00')");
    // NaN reached Lance as a column name; a NULL in IN failed lance-spark's planning
    assertEquals(List.of(1L), ids(t, "x = CAST('NaN' AS DOUBLE)"));
    assertEquals(List.of(2L), ids(t, "name IN ('b', NULL)"));
    // java.time values reached Lance unquoted (`d == 2024-01-02`)
    spark.conf().set("spark.sql.datetime.java8API.enabled", "true");
    try {
      assertEquals(List.of(2L), ids(t, "d = DATE'2024-01-02'"));
      assertEquals(List.of(2L), ids(t, "ts = TIMESTAMP'2024-01-01 01:00:00'"));
    } finally {
      spark.conf().unset("spark.sql.datetime.java8API.enabled");
    }
    assertFalse(filteredBySpark(t, "d = DATE'2024-01-02'"), "java.sql dates are pushed down");
  }

  @Test
  void floatZerosNegativeNansOddDatesAndKeywordColumnsGetSparksRows() {
    // each gave wrong rows when pushed down (measured): Lance orders -0.0 below 0.0 and a NaN
    // with its sign bit below every number, Spark moves 1582-10-10, java.sql.Date prints year
    // 10000 as 0000, and a column named `null` reached Lance as the value NULL
    String t = emptyTable("odd", "(id BIGINT, d DOUBLE, dt DATE, `null` INT, l BIGINT)");
    sql("INSERT INTO " + t + " VALUES (1, 0.0D, DATE'2024-01-01', NULL, 1), "
        + "(2, -0.0D, DATE'1582-10-10', 2, -9223372036854775808), "
        + "(3, -CAST('NaN' AS DOUBLE), DATE'+10000-01-01', 3, 3)");
    assertEquals(List.of(1L, 2L), ids(t, "d = 0.0D"));
    assertEquals(List.of(1L, 2L, 3L), ids(t, "d >= 0.0D"));
    assertEquals(List.of(), ids(t, "d < 0.0D"));
    assertEquals(List.of(1L, 2L), ids(t, "d < 1.0D"));
    assertEquals(List.of(3L), ids(t, "d > 1.0D"));
    assertEquals(List.of(2L), ids(t, "dt = DATE'1582-10-10'"));
    assertEquals(List.of(3L), ids(t, "dt = DATE'+10000-01-01'"));
    assertEquals(List.of(), ids(t, "dt > DATE'+10000-01-01'"));
    assertEquals(List.of(1L), ids(t, "`null` IS NULL"));
    assertEquals(List.of(2L, 3L), ids(t, "`null` IS NOT NULL"));
    assertEquals(List.of(2L), ids(t, "l = -9223372036854775808"));
    assertFalse(filteredBySpark(t, "d = 1.5D"), "other doubles are still pushed down");
    sql("DELETE FROM " + t + " WHERE `null` IS NULL");
    assertEquals(List.of(2L, 3L), ids(t, "true"), "the DELETE removed only its row");
  }

  @Test
  void timestampsAreFilteredBySparkWhenTheJvmIsNotAtUtc() {
    // lance-spark writes a timestamp as the JVM's wall-clock time and Lance reads it as UTC:
    // in America/Los_Angeles, `ts = TIMESTAMP'2024-01-01 01:00:00'` matched no row
    String t = emptyTable("tz", "(id BIGINT, ts TIMESTAMP)");
    java.util.TimeZone jvm = java.util.TimeZone.getDefault();
    String session = spark.conf().get("spark.sql.session.timeZone");
    try {
      java.util.TimeZone.setDefault(java.util.TimeZone.getTimeZone("America/Los_Angeles"));
      spark.conf().set("spark.sql.session.timeZone", "America/Los_Angeles");
      sql("INSERT INTO " + t + " VALUES (1, TIMESTAMP'2024-01-01 00:00:00'), "
          + "(2, TIMESTAMP'2024-01-01 01:00:00'), (3, TIMESTAMP'2024-01-01 09:00:00')");
      assertEquals(List.of(2L), ids(t, "ts = TIMESTAMP'2024-01-01 01:00:00'"));
      assertEquals(List.of(2L, 3L), ids(t, "ts > TIMESTAMP'2024-01-01 00:30:00'"));
      assertTrue(filteredBySpark(t, "ts > TIMESTAMP'2024-01-01 00:30:00'"));
    } finally {
      java.util.TimeZone.setDefault(jvm);
      spark.conf().set("spark.sql.session.timeZone", session);
    }
  }

  @Test
  void deleteAndUpdateWithAQuoteInTheConditionTouchOnlyTheirRows() {
    // DELETE ... WHERE name = 'zz\' OR \'a\'=\'a' deleted every row of the table
    String t = newTable("lance");
    sql("INSERT INTO " + t + " VALUES (3, 'O\\'Brien'), (4, 'zz')");
    sql("DELETE FROM " + t + " WHERE name = 'zz\\' OR \\'a\\'=\\'a'");
    assertEquals(List.of(1L, 2L, 3L, 4L), ids(t, "true"));
    sql("UPDATE " + t + " SET id = id + 10 WHERE name = 'O\\'Brien'");
    sql("DELETE FROM " + t + " WHERE name IN ('zz', 'it\\'s')");
    assertEquals("[[1,a], [2,b], [13,O'Brien]]",
        sql("SELECT * FROM " + t + " ORDER BY id").toString());
  }

  // ---------------------------------------------------------------- secrets

  @Test
  void describeAndPropertiesNeverShowCredentials() throws Exception {
    spark.conf().set("spark.sql.catalog.lance_sec", LanceRestCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.lance_sec.uri", shared.plain.uri());
    spark.conf().set("spark.sql.catalog.lance_sec.token", "tok-SECRET-1");
    spark.conf().set("spark.sql.catalog.lance_sec.header.X-Api-Key", "hdr-SECRET-2");
    spark.conf().set("spark.sql.catalog.lance_sec.storage.aws_secret_access_key",
        "sto-SECRET-3");
    String t = newTable("lance_sec");
    String text = describeText(t) + sql("SHOW TBLPROPERTIES " + t).toString();
    Table table = ((LanceRestCatalog) spark.sessionState().catalogManager().catalog("lance_sec"))
        .loadTable(Identifier.of(new String[] {t.split("\\.")[1]}, "t"));
    text += table.properties().toString() + table.toString() + table.name();
    assertFalse(text.contains("SECRET"), text);
    LanceRestCatalog c =
        (LanceRestCatalog) spark.sessionState().catalogManager().catalog("lance_sec");
    Map<String, String> shipped =
        DescribedTables.executorNamespaceProperties(c.client().config());
    assertEquals(shared.plain.uri(), shipped.get("uri"));
    assertFalse(shipped.toString().contains("SECRET"), shipped.toString());
  }

  @Test
  void executorsGetUriAndPlainHeadersOnly() {
    LanceRestCatalog c = (LanceRestCatalog) spark.sessionState().catalogManager()
        .catalog("lance");
    Map<String, String> shipped =
        DescribedTables.executorNamespaceProperties(c.client().config());
    assertEquals("tests", shipped.get("header.X-Tenant"));
    assertEquals(Map.of("uri", shared.plain.uri(), "delimiter", "$",
        "header.X-Tenant", "tests"), shipped);
  }

  // ---------------------------------------------------------------- options

  @Test
  void unknownOptionsAreRejectedByName() {
    ClientConfigException e = assertThrows(ClientConfigException.class,
        () -> CatalogOptions.parse("lance", Map.of("uri", "http://x", "cache.ttl", "5")));
    assertTrue(e.getMessage().contains("[cache.ttl]"), e.getMessage());
    assertTrue(e.getMessage().contains("cache.ttl-ms"), e.getMessage());
    ClientConfigException e2 = assertThrows(ClientConfigException.class,
        () -> CatalogOptions.parse("lance", Map.of("uri", "http://x", "cache.ttl-ms", "-1")));
    assertTrue(e2.getMessage().contains("non-negative"), e2.getMessage());
  }

  @Test
  void scanBatchesAreSizedByTheTableUnlessTheCatalogSetsThem() throws Exception {
    String ns = SharedSpark.unique("batch");
    sql("CREATE NAMESPACE lance." + ns);
    sql("CREATE TABLE lance." + ns + ".narrow (id BIGINT, name STRING, v DOUBLE)");
    sql("CREATE TABLE lance." + ns + ".wide (id BIGINT, emb ARRAY<FLOAT>)");
    sql("CREATE TABLE lance." + ns + ".docs (id BIGINT, body STRING)");
    // enough rows that the files' own overhead does not count: about 20 bytes a row
    sql("INSERT INTO lance." + ns + ".narrow SELECT id, CAST(id AS STRING), id * 0.5 "
        + "FROM range(1, 20001)");
    sql("INSERT INTO lance." + ns + ".wide VALUES (1, array(0.5, 1.5))");
    // documents of 4 KB of hex digits (about 2 KB a row in the files): a 65,536-row batch
    // would hold 256 MB of them
    sql("INSERT INTO lance." + ns + ".docs SELECT id, concat_ws('', transform(sequence(1, "
        + "128), i -> md5(concat(CAST(id AS STRING), '-', CAST(i AS STRING))))) "
        + "FROM range(0, 200)");
    for (String t : List.of("narrow", "wide", "docs")) {
      sql("REFRESH TABLE lance." + ns + "." + t);
    }
    LanceRestCatalog cat = (LanceRestCatalog) spark.sessionState().catalogManager()
        .catalog("lance");
    java.util.function.Function<String, Integer> batch = t -> {
      try {
        return ((CatalogTable) cat.loadTable(org.apache.spark.sql.connector.catalog.Identifier
            .of(new String[] {ns}, t))).readOptions().getBatchSize();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    };
    assertEquals(io.lancerest.spark.connector.ScanBatchRows.NARROW, batch.apply("narrow"));
    assertEquals(io.lancerest.spark.connector.ScanBatchRows.DEFAULT, batch.apply("wide"));
    assertEquals(io.lancerest.spark.connector.ScanBatchRows.DEFAULT, batch.apply("docs"),
        "sized by what a row takes in the files, not by the column types alone");
    // a scan with options (here: time travel) keeps the table's batch size
    assertEquals(List.of("[1,1,0.5]"), spark.read().option("versionAsOf", "2")
        .table("lance." + ns + ".narrow").where("id = 1").collectAsList().stream()
        .map(Object::toString).toList());

    ClientConfigException e = assertThrows(ClientConfigException.class,
        () -> CatalogOptions.parse("lance", Map.of("uri", "http://x", "read.batch-size", "0")));
    assertTrue(e.getMessage().contains("read.batch-size") && e.getMessage().contains(
        "positive number of rows"), e.getMessage());
    assertEquals(4096, CatalogOptions.parse("lance", Map.of("uri", "http://x",
        "read.batch-size", "4096")).readBatchSize());
  }

  @Test
  void optionsAreReadWithTheirDefaults() {
    CatalogOptions o = CatalogOptions.parse("lance", Map.of("uri", "http://x",
        "parent", "a$b", "storage.region", "eu", "table-default.k", "v", "mv.mode", "off"));
    assertEquals(List.of("a", "b"), o.parent());
    assertEquals(30_000, o.cacheTtl().toMillis());
    assertEquals(Map.of("region", "eu"), o.storageOptions());
    assertEquals(Map.of("k", "v"), o.tableDefaults());
    assertEquals("off", o.mvMode());
    assertNull(o.readBatchSize(), "sized by each table's columns");
    assertFalse(o.toString().contains("eu"), "storage values are not printed");
  }

  @Test
  void parentPrefixesEveryIdentifierAndTableDefaultsApply() {
    String parent = SharedSpark.unique("parent");
    try (var client = shared.server.newClient()) {
      client.createNamespace(
          new io.lancerest.client.model.CreateNamespaceRequest().id(List.of(parent))
              .properties(Map.of()));
      spark.conf().set("spark.sql.catalog.lance_p", LanceRestCatalog.class.getName());
      spark.conf().set("spark.sql.catalog.lance_p.uri", shared.plain.uri());
      spark.conf().set("spark.sql.catalog.lance_p.parent", parent);
      spark.conf().set("spark.sql.catalog.lance_p.table-default.team", "red");
      sql("CREATE NAMESPACE lance_p.sub");
      sql("CREATE TABLE lance_p.sub.t (x INT)");
      assertEquals(List.of("sub"), client.listAllNamespaces(List.of(parent)).toList());
      assertEquals("t", client.describeTable(new DescribeTableRequest()
          .id(List.of(parent, "sub", "t")))
          .getTable());
      assertEquals("red", sql("SHOW TBLPROPERTIES lance_p.sub.t").stream()
          .filter(r -> r.getString(0).equals("team")).findFirst().orElseThrow().getString(1));
      assertEquals(1, sql("SHOW NAMESPACES IN lance_p").size());
    }
  }

  // ---------------------------------------------------------------- errors

  @Test
  void tableExistsPropagatesServerFailures() throws Exception {
    try (MockWebServer down = new MockWebServer()) {
      down.setDispatcher(new okhttp3.mockwebserver.Dispatcher() {
        @Override
        public MockResponse dispatch(okhttp3.mockwebserver.RecordedRequest r) {
          return new MockResponse().setResponseCode(503).setBody("maintenance");
        }
      });
      down.start();
      LanceRestCatalog c = new LanceRestCatalog();
      c.initialize("down", new CaseInsensitiveStringMap(Map.of(
          "uri", "http://127.0.0.1:" + down.getPort(), "retry.max-attempts", "1")));
      assertThrows(ServiceUnavailableException.class,
          () -> c.tableExists(Identifier.of(new String[] {"ns"}, "t")));
      assertThrows(ServiceUnavailableException.class,
          () -> c.namespaceExists(new String[] {"ns"}));
    }
  }

  @Test
  void managedVersioningTablesNeverFallBackToTheDataset() throws Exception {
    String t = newTable("lance");
    ForwardingProxy managed = new ForwardingProxy(shared.server.uri(),
        shared.server.rootDir().toUri().toString(), false, 0);
    try {
      managed.forceManagedVersioning = true;
      LanceRestCatalog c = new LanceRestCatalog();
      c.initialize("managed", new CaseInsensitiveStringMap(Map.of("uri", managed.uri())));
      Identifier id = Identifier.of(new String[] {t.split("\\.")[1]}, "t");
      UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
          () -> c.alterTable(id,
              org.apache.spark.sql.connector.catalog.TableChange.setProperty("k", "v")));
      assertTrue(e.getMessage().contains("managed_versioning=true"), e.getMessage());
      assertThrows(UnsupportedOperationException.class, () -> c.alterTable(id,
          org.apache.spark.sql.connector.catalog.TableChange.addColumn(new String[] {"c"},
              org.apache.spark.sql.types.DataTypes.IntegerType)));
      assertEquals(2, spark.table(t).columns().length, "nothing changed");
      assertFalse(sql("SHOW TBLPROPERTIES " + t).toString().contains("k,v"));
    } finally {
      managed.close();
    }
  }

  @Test
  void createdSchemaMatchesTheStatement() throws Exception {
    String t = newTable("lance");
    StructType schema = spark.table(t).schema();
    assertEquals("struct<id:bigint,name:string>", schema.simpleString());
  }
}
