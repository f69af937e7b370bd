package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.error.FunctionFailedException;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.layout.GenevaLayout;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.lance.ReadOptions;

/**
 * CREATE MATERIALIZED VIEW is all or nothing, for every kind: a function option the function
 * refuses fails the CREATE before anything exists, and a CREATE ... WITH DATA whose first refresh
 * throws drops the view again. Skips under error_handling are a success (PARTIAL) and keep it.
 * Default mode (auto), as a user has it: the directory server makes every view client-managed.
 */
class CreateAllOrNothingTest {
  private static final String SPLITTER = "io.lancerest.spark.mv.chunker.TextSplitter";
  private static final String TOP_K = "io.lancerest.spark.mv.udtf.TopKUdtf";
  /** Throws IllegalStateException for a doc containing BOOM. */
  private static final String FAILING_CHUNKER =
      "io.lancerest.spark.mv.chunker.TestChunkers$Failing";
  /** Throws IllegalStateException for partition 'bad'. */
  private static final String FAILING_UDTF =
      "io.lancerest.spark.mv.engine.ClientFunctionViewTest$FailOnBad";
  private static final String CHUNKS = "output_schema = 'chunk STRING NOT NULL, char_offset INT "
      + "NOT NULL'";
  private static final String SKIP = "error_handling = '{\"format\":\"lancerest.error_handling"
      + ".v1\",\"rules\":[{\"match\":\"IllegalStateException\",\"action\":\"skip\"}]}'";

  static EngineFixture f;
  static String ns;
  static String src;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
    ns = f.namespace("all_or_nothing");
    src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, doc STRING, grp STRING)");
    f.sql("INSERT INTO " + src + " VALUES (0, 'a b', 'good'), (1, 'c BOOM', 'bad'), "
        + "(2, 'd e f', 'good')");
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  private static String view(String name) {
    return "lance." + ns + "." + name;
  }

  private static Row create(String name, String rest) {
    List<Row> rows = f.sql("CREATE MATERIALIZED VIEW " + view(name) + " " + rest);
    assertEquals(1, rows.size(), "CREATE ... WITH DATA returns the first refresh's row");
    return rows.get(0);
  }

  private static <T extends Throwable> T fails(Class<T> type, String name, String rest) {
    Executable create = () -> f.sql("CREATE MATERIALIZED VIEW " + view(name) + " " + rest);
    return assertThrows(type, create);
  }

  /** No table of that name in the catalog, and no file or folder of it (or its errors table). */
  private static void nothingLeft(String name) {
    assertFalse(f.spark.catalog().tableExists(view(name)), name + " is still in the catalog");
    List<String> tables = f.rows("SHOW TABLES IN lance." + ns);
    assertTrue(tables.stream().noneMatch(t -> t.contains("|" + name + "|")
        || t.contains("|" + name + "__errors|")), "SHOW TABLES lists it: " + tables);
    assertEquals(List.of(), filesOf(name), "files of " + name + " are left on disk");
  }

  /** The view's and its errors table's directories on the server's disk. */
  private static List<String> filesOf(String name) {
    try (Stream<Path> files = Files.walk(f.root)) {
      // The directory server keeps table "ns.v" in "<hash>_ns$v"; other layouts use "v.lance".
      return files.filter(p -> Stream.of("$" + name, "$" + name + "__errors",
          "/" + name + ".lance", "/" + name + "__errors.lance").anyMatch(p.toString()::endsWith))
          .map(p -> p.getFileName().toString().replaceFirst("^[^$]*\\$", "")).sorted()
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String notCreated(String name) {
    return "Materialized view " + view(name) + " was not created: its first refresh failed, and "
        + "CREATE MATERIALIZED VIEW ... WITH DATA then removes the view. Fix the cause and run "
        + "the CREATE again, or create the view WITH NO DATA and refresh it later. The refresh "
        + "failed with: ";
  }

  // ---------------------------------------------------------------- options checked at CREATE

  @Test
  void aChunkerOptionTheFunctionRefusesFailsTheCreateWithItsName() {
    String rest = "USING CHUNKER '" + SPLITTER + "' OPTIONS (input_columns = 'doc', "
        + "chunk_size = '%s') AS SELECT id, doc FROM " + src;
    InvalidOptionException e = fails(InvalidOptionException.class, "v6",
        rest.formatted("-3"));
    assertEquals("chunk_size must be a positive whole number, got '-3' (view " + view("v6")
        + ", chunker " + SPLITTER + ")", e.getMessage());
    assertEquals("chunk_size", e.option());
    assertEquals("-3", e.value());
    nothingLeft("v6");
    Row done = create("v6", rest.formatted("3"));
    assertEquals("DONE", done.getString(1));
    assertEquals(List.of("0|a b", "1|OOM", "1|c B", "2| f", "2|d e"),
        f.rows("SELECT id, chunk FROM " + view("v6")));
  }

  @Test
  void aUdtfOptionTheFunctionRefusesFailsTheCreateWithItsName() {
    String rest = "USING UDTF '" + TOP_K + "' PARTITION BY grp OPTIONS (k = '%s', order_by = "
        + "'%s') AS SELECT grp, id FROM " + src;
    InvalidOptionException k = fails(InvalidOptionException.class, "t6",
        rest.formatted("-1", "id"));
    assertEquals("k must be a positive whole number, got '-1' (view " + view("t6") + ", udtf "
        + TOP_K + ")", k.getMessage());
    InvalidOptionException orderBy = fails(InvalidOptionException.class, "t6",
        rest.formatted("1", "idd"));
    assertEquals("order_by must be the input column to rank by, one of [grp, id], got 'idd' "
        + "(view " + view("t6") + ", udtf " + TOP_K + ")", orderBy.getMessage());
    nothingLeft("t6");
    assertEquals("DONE", create("t6", rest.formatted("1", "id")).getString(1));
    assertEquals(List.of("bad|1|1", "good|2|1"), f.rows("SELECT * FROM " + view("t6")));
  }

  @Test
  void aQueryViewOptionOfTheWrongTypeFailsTheCreateWithItsName() {
    String rest = "OPTIONS (auto_refresh = '%s') AS SELECT id FROM " + src;
    InvalidOptionException e = fails(InvalidOptionException.class, "q6",
        rest.formatted("maybe"));
    assertEquals("auto_refresh must be true or false, got 'maybe' (view " + view("q6") + ")",
        e.getMessage());
    nothingLeft("q6");
    assertEquals("DONE", create("q6", rest.formatted("false")).getString(1));
    assertEquals(List.of("0", "1", "2"), f.rows("SELECT * FROM " + view("q6")));
  }

  @Test
  void aStoredViewWithOptionsItsFunctionRefusesFailsItsRefreshWithTheOptionError()
      throws Exception {
    f.sql("CREATE MATERIALIZED VIEW " + view("stored") + " USING CHUNKER '" + SPLITTER
        + "' OPTIONS (input_columns = 'doc', chunk_size = '3') AS SELECT id, doc FROM " + src
        + " WITH NO DATA");
    // Another client stores chunk_size = -3 (with a matching checksum): this one never checked it.
    CatalogBinding.TableLocation t = CatalogBinding.of(f.spark, EngineFixture.CATALOG)
        .locate(List.of(ns, "stored"), "view");
    long version;
    FunctionEnvelope old;
    try (BufferAllocator a = new RootAllocator(); org.lance.Dataset ds = org.lance.Dataset.open(a,
        t.location(), new ReadOptions.Builder().setStorageOptions(t.storageOptions()).build())) {
      version = ds.version();
      Map<String, String> md = ds.getSchema().getCustomMetadata();
      old = FunctionEnvelope.decode(md.get(GenevaLayout.CHUNKER), md.get(GenevaLayout.UDTF_SHA));
    }
    Map<String, String> options = new TreeMap<>(old.options());
    options.put("chunk_size", "-3");
    FunctionEnvelope bad = FunctionEnvelope.java(old.className(), old.name(), old.version(),
        old.outputSchema(), old.inputColumns(), old.batch(), options);
    ViewCommit.builder(t.location(), version).storageOptions(t.storageOptions())
        .schemaMetadata(Map.of(GenevaLayout.CHUNKER, bad.toBase64(), GenevaLayout.UDTF_SHA,
            bad.sha256Hex())).build().commit();
    f.spark.catalog().refreshTable(view("stored"));

    String expected = "chunk_size must be a positive whole number, got '-3' (view "
        + view("stored") + ", chunker " + SPLITTER + "). Nothing was refreshed; recreate the "
        + "view with valid options (DROP MATERIALIZED VIEW " + view("stored") + ", then CREATE "
        + "MATERIALIZED VIEW)";
    assertEquals(expected, assertThrows(InvalidOptionException.class,
        () -> f.sql("REFRESH MATERIALIZED VIEW " + view("stored"))).getMessage());
    assertEquals(expected, assertThrows(InvalidOptionException.class,
        () -> f.sql("EXPLAIN REFRESH MATERIALIZED VIEW " + view("stored"))).getMessage());
    assertTrue(f.spark.catalog().tableExists(view("stored")), "a failed REFRESH drops nothing");
  }

  // ---------------------------------------------------------------- a failing first refresh

  @Test
  void aQueryViewWhoseFirstRefreshFailsIsNotCreated() {
    String select = "AS SELECT id, if(id < 2, id, raise_error('id 2 is not allowed')) AS checked "
        + "FROM " + src;
    MaterializedViewException e = fails(MaterializedViewException.class, "q_fail", select);
    assertTrue(e.getMessage().contains("id 2 is not allowed"), e.getMessage());
    assertTrue(e.getMessage().startsWith(notCreated("q_fail")), e.getMessage());
    nothingLeft("q_fail");
    assertEquals("DONE", create("q_fail", select + " WHERE id < 2").getString(1));
    assertEquals(List.of("0|0", "1|1"), f.rows("SELECT * FROM " + view("q_fail")));
  }

  @Test
  void aChunkerViewWhoseFirstRefreshFailsIsNotCreated() {
    String rest = "USING CHUNKER '" + FAILING_CHUNKER + "' OPTIONS (input_columns = 'doc', "
        + CHUNKS + "%s) AS SELECT id, doc FROM " + src;
    MaterializedViewException e = fails(MaterializedViewException.class, "c_fail",
        rest.formatted(""));
    assertInstanceOf(FunctionFailedException.class, e.getCause());
    assertTrue(e.getMessage().startsWith(notCreated("c_fail") + "Refresh of view "
        + view("c_fail") + " (job "), e.getMessage());
    assertTrue(e.getMessage().contains(") failed: chunker 'Failing' (" + FAILING_CHUNKER
        + ") failed on source row id "), e.getMessage());
    nothingLeft("c_fail");

    // Skips beyond max_skip_count fail the refresh too, and leave no errors table behind.
    String tooMany = SKIP.substring(0, SKIP.length() - 2) + ",\"max_skip_count\":0}'";
    MaterializedViewException over = fails(MaterializedViewException.class, "c_fail",
        rest.formatted(", " + tooMany));
    assertTrue(over.getMessage().startsWith(notCreated("c_fail")), over.getMessage());
    assertTrue(over.getMessage().contains("error_handling.max_skip_count = 0; the refresh "
        + "committed nothing"), over.getMessage());
    nothingLeft("c_fail");

    // A skip under error_handling is a success: PARTIAL, the view and its errors table stay.
    Row partial = create("c_fail", rest.formatted(", " + SKIP));
    assertEquals("PARTIAL", partial.getString(1));
    assertEquals(1L, partial.getLong(6));
    assertEquals(List.of("0|a", "0|b", "2|d", "2|e", "2|f"),
        f.rows("SELECT id, chunk FROM " + view("c_fail")));
    assertEquals(List.of("c_fail", "c_fail__errors"), filesOf("c_fail"));
  }

  @Test
  void aUdtfViewWhoseFirstRefreshFailsIsNotCreatedNorItsCheckpoints() {
    String rest = "USING UDTF '" + FAILING_UDTF + "' PARTITION BY grp %s AS SELECT grp, id FROM "
        + src;
    MaterializedViewException e = fails(MaterializedViewException.class, "u_fail",
        rest.formatted(""));
    assertInstanceOf(FunctionFailedException.class, e.getCause());
    assertTrue(e.getMessage().contains("partition bad cannot be processed"), e.getMessage());
    assertTrue(e.getMessage().startsWith(notCreated("u_fail")), e.getMessage());
    nothingLeft("u_fail");

    Row partial = create("u_fail", rest.formatted("OPTIONS (" + SKIP + ")"));
    assertEquals("PARTIAL", partial.getString(1));
    assertEquals(List.of("good|2"), f.rows("SELECT * FROM " + view("u_fail")));
    assertEquals(List.of("u_fail", "u_fail__errors"), filesOf("u_fail"));
  }

  @Test
  void withNoDataKeepsTheViewAndIfNotExistsRunsNothing() {
    String rest = "USING CHUNKER '" + FAILING_CHUNKER + "' OPTIONS (input_columns = 'doc', "
        + CHUNKS + ") AS SELECT id, doc FROM " + src;
    assertEquals(List.of(), f.sql("CREATE MATERIALIZED VIEW " + view("nd") + " " + rest
        + " WITH NO DATA"));
    assertTrue(f.spark.catalog().tableExists(view("nd")));
    // A failing REFRESH of an existing view leaves it as it was.
    assertThrows(FunctionFailedException.class,
        () -> f.sql("REFRESH MATERIALIZED VIEW " + view("nd")));
    assertTrue(f.spark.catalog().tableExists(view("nd")));
    // IF NOT EXISTS finds it and runs no refresh, so nothing fails and nothing is dropped.
    assertEquals(List.of(), f.sql("CREATE MATERIALIZED VIEW IF NOT EXISTS " + view("nd") + " "
        + rest));
    assertTrue(f.spark.catalog().tableExists(view("nd")));
    assertEquals(List.of(), f.rows("SELECT * FROM " + view("nd")));
  }
}
