package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.CreateViewRequest;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.error.EnvelopeChecksumException;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.error.MaterializedViewAlreadyExistsException;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Every CREATE validation gives a clear error and creates nothing (client-managed mode). */
class ViewValidationTest {
  static EngineFixture f;
  static String ns;
  static String src;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of("mv.mode", "client"));
    ns = f.namespace("val");
    src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, name STRING, score INT)");
    f.sql("INSERT INTO " + src + " VALUES (1, 'a', 1), (2, 'b', 2)");
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  /** Runs the statement, expects {@code type} with {@code text}, and that no view was made. */
  private static <T extends Throwable> T refused(Class<T> type, String text, String view,
      Executable statement) {
    T e = assertThrows(type, statement);
    assertTrue(e.getMessage().contains(text), e.getMessage());
    assertFalse(f.spark.catalog().tableExists("lance." + ns + "." + view), view + " exists");
    return e;
  }

  private static Executable create(String view, String rest) {
    return () -> f.sql("CREATE MATERIALIZED VIEW lance." + ns + "." + view + " " + rest);
  }

  @Test
  void joinsWindowsSubqueriesAndAggregatesThatCannotBeMaintainedAreRefused() {
    refused(InvalidViewDefinitionException.class, "uses a join", "j", create("j",
        "AS SELECT a.id FROM " + src + " a JOIN " + src + " b ON a.id = b.id"));
    refused(InvalidViewDefinitionException.class, "uses an aggregate", "g", create("g",
        "AS SELECT DISTINCT name FROM " + src));
    refused(InvalidViewDefinitionException.class, "cannot maintain incrementally", "g2",
        create("g2", "AS SELECT count(DISTINCT name) AS n FROM " + src));
    refused(InvalidViewDefinitionException.class, "below its GROUP BY", "g3", create("g3",
        "AS SELECT a.name, count(*) AS n FROM " + src + " a JOIN " + src + " b ON a.id = b.id "
        + "GROUP BY a.name"));
    // a chunker groups nothing: its SELECT is 1:1 with source rows
    refused(InvalidViewDefinitionException.class, "uses an aggregate", "g4", create("g4",
        "USING CHUNKER 'io.lancerest.spark.mv.chunker.TextSplitter' AS SELECT name, "
        + "count(*) AS n FROM " + src + " GROUP BY name"));
    refused(InvalidViewDefinitionException.class, "uses a window function", "w", create("w",
        "AS SELECT id, row_number() OVER (ORDER BY id) AS r FROM " + src));
    refused(InvalidViewDefinitionException.class, "uses a subquery", "s", create("s",
        "AS SELECT id FROM " + src + " WHERE id IN (SELECT id FROM " + src + ")"));
    refused(InvalidViewDefinitionException.class, "reads from a subquery", "s2", create("s2",
        "AS SELECT id FROM (SELECT id, name FROM " + src + ") t"));
    refused(InvalidViewDefinitionException.class, "nondeterministic", "r", create("r",
        "AS SELECT id, rand() AS x FROM " + src));
  }

  /**
   * A view of the last seconds of a table would keep the rows it once held: a refresh computes
   * only the changed source rows, so old rows are never compared with the moved clock again.
   */
  @Test
  void aViewOfTheLastSecondsIsRefusedNamingTheClockFunction() {
    f.sql("CREATE TABLE lance." + ns + ".ev (id BIGINT, ts TIMESTAMP)");
    f.sql("INSERT INTO lance." + ns + ".ev SELECT id, current_timestamp() FROM range(10)");
    String view = "lance." + ns + ".recent";
    InvalidViewDefinitionException e = refused(InvalidViewDefinitionException.class, "",
        "recent", create("recent", "AS SELECT id, ts FROM lance." + ns + ".ev WHERE ts > "
            + "current_timestamp() - INTERVAL 4 SECONDS"));
    assertEquals("The SELECT of view " + view + " uses current_timestamp() in WHERE, whose value "
        + "changes between refreshes: the view could not equal its SELECT after a refresh, since "
        + "a refresh computes only the source rows that changed and the rows the view holds "
        + "keep the value of an earlier one. Compare with a literal you move yourself (e.g. ts > "
        + "TIMESTAMP '2025-01-01 00:00:00', re-creating the view to move it), or keep the rows "
        + "in the view and filter or compute at query time (e.g. SELECT * FROM " + view
        + " WHERE ts > current_timestamp() - INTERVAL 7 DAYS)", e.getMessage());
  }

  /**
   * Spark calls these functions deterministic (one value a query), so the check of
   * nondeterministic expressions let them through: each is refused by name, in a query view's
   * WHERE and SELECT list, an aggregate view's HAVING, key, argument and WHERE, and the SELECT of
   * a chunker and of a UDTF view.
   */
  @Test
  void everyFunctionOfTheClockOrTheSessionIsRefusedWhereverTheSelectUsesIt() {
    Map<String, String> named = new java.util.LinkedHashMap<>();
    // query views: each function (Spark 3.5 names an alias, curdate() …, by its function)
    named.put("AS SELECT id FROM " + src + " WHERE current_timestamp() > TIMESTAMP "
        + "'2000-01-01 00:00:00'", "current_timestamp() in WHERE");
    named.put("AS SELECT id, now() AS t FROM " + src, "now() in column t");
    named.put("AS SELECT id, current_date() AS d FROM " + src, "current_date() in column d");
    named.put("AS SELECT id FROM " + src + " WHERE CURRENT_DATE > DATE '2000-01-01'",
        "current_date() in WHERE");
    named.put("AS SELECT id, curdate() AS d FROM " + src, "current_date() in column d");
    named.put("AS SELECT id, localtimestamp() AS t FROM " + src,
        "localtimestamp() in column t");
    named.put("AS SELECT id, current_timezone() AS z FROM " + src,
        "current_timezone() in column z");
    named.put("AS SELECT id FROM " + src + " WHERE name = current_user()",
        "current_user() in WHERE");
    named.put("AS SELECT id FROM " + src + " WHERE name = user()", "current_user() in WHERE");
    named.put("AS SELECT id, current_database() AS db FROM " + src,
        "current_database() in column db");
    named.put("AS SELECT id, current_schema() AS db FROM " + src,
        "current_database() in column db");
    named.put("AS SELECT id, current_catalog() AS c FROM " + src,
        "current_catalog() in column c");
    // inside another function: the column names where
    named.put("AS SELECT id, unix_timestamp() AS u FROM " + src,
        "current_timestamp() in column u");
    // aggregate views: HAVING, a grouping key, an aggregate's argument, the WHERE below
    named.put("AS SELECT name, max(score) AS m FROM " + src + " GROUP BY name HAVING max(score) "
        + "> hour(current_timestamp())", "current_timestamp() in HAVING");
    named.put("AS SELECT date_add(current_date(), score) AS d, count(*) AS n FROM " + src
        + " GROUP BY date_add(current_date(), score)", "current_date() in GROUP BY");
    named.put("AS SELECT name, sum(datediff(now(), DATE '2000-01-01') * score) AS s FROM " + src
        + " GROUP BY name", "now() in column s");
    named.put("AS SELECT name, count(*) AS n FROM " + src + " WHERE name <> current_user() "
        + "GROUP BY name", "current_user() in WHERE");
    // the SELECT of function views
    named.put("USING CHUNKER 'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS "
        + "(input_columns = 'name', chunk_size = 8) AS SELECT id, name FROM " + src + " WHERE "
        + "current_date() > DATE '2000-01-01'", "current_date() in WHERE");
    named.put("USING UDTF 'io.lancerest.spark.mv.udtf.TopKUdtf' PARTITION BY name OPTIONS "
        + "(order_by = 'score') AS SELECT name, score FROM " + src + " WHERE score < "
        + "dayofmonth(localtimestamp()) + 100", "localtimestamp() in WHERE");
    // every case's answer, so that one run shows every difference
    List<String> want = new java.util.ArrayList<>();
    List<String> got = new java.util.ArrayList<>();
    int i = 0;
    for (Map.Entry<String, String> c : named.entrySet()) {
      String view = "clock" + i++;
      String refusal = "The SELECT of view lance." + ns + "." + view + " uses " + c.getValue()
          + ", whose value changes between refreshes: the view could not equal its SELECT "
          + "after a refresh";
      want.add(c.getKey() + " -> " + refusal);
      String answer;
      try {
        create(view, c.getKey()).execute();
        answer = "created";
      } catch (InvalidViewDefinitionException e) {
        // the rest of the message, what to write instead, is the same for every function
        answer = e.getMessage().startsWith(refusal) ? refusal : e.getMessage();
      } catch (Throwable e) {
        answer = e.toString();
      }
      boolean left = f.spark.catalog().tableExists("lance." + ns + "." + view)
          || f.spark.catalog().tableExists("lance." + ns + "." + view + "__errors");
      got.add(c.getKey() + " -> " + answer + (left ? " [a table was left behind]" : ""));
    }
    assertEquals(String.join("\n", want), String.join("\n", got));
  }

  /** A definition given as a source query through the Java API is checked as its SELECT. */
  @Test
  void aSourceQueryOfTheJavaApiIsCheckedAsTheSelectItStandsFor() {
    SourceQuery clock = SourceQuery.of(List.of(ns, "src"), List.of(ns), List.of(
        new SourceQuery.OutputColumn("id", "id")), "current_timestamp() > TIMESTAMP "
        + "'2000-01-01 00:00:00'", null);
    InvalidViewDefinitionException e = refused(InvalidViewDefinitionException.class,
        "The SELECT of view lance." + ns + ".jclock uses current_timestamp() in WHERE, whose "
            + "value changes between refreshes", "jclock", () -> f.views().create(
            new CreateViewRequest(List.of(ns, "jclock"), false, MaterializedViewKind.QUERY, null,
                clock, null, null, null, Map.of(), Map.of(), true)));
    assertTrue(e.getMessage().contains("the view could not equal its SELECT after a refresh"),
        e.getMessage());
    SourceQuery random = SourceQuery.of(List.of(ns, "src"), List.of(ns), List.of(
        new SourceQuery.OutputColumn("id", "id"), new SourceQuery.OutputColumn("r", "rand()")),
        null, null);
    refused(InvalidViewDefinitionException.class, "nondeterministic expression (rand)",
        "jrand", () -> f.views().create(new CreateViewRequest(List.of(ns, "jrand"), false,
            MaterializedViewKind.QUERY, null, random, null, null, null, Map.of(), Map.of(),
            true)));

    // a valid one is created and filled as its SELECT gives
    SourceQuery upper = SourceQuery.of(List.of(ns, "src"), List.of(ns), List.of(
        new SourceQuery.OutputColumn("id", "id"), new SourceQuery.OutputColumn("un",
            "upper(name)")), "score > 1", null);
    f.views().create(new CreateViewRequest(List.of(ns, "jupper"), false,
        MaterializedViewKind.QUERY, null, upper, null, null, null, Map.of(), Map.of(), true));
    assertEquals(List.of("2|B"), f.rows("SELECT * FROM lance." + ns + ".jupper"));
  }

  @Test
  void aUdtfThatDoesNotTellItsOutputSchemaNeedsTheOption() {
    String udtf = "io.lancerest.spark.mv.udtf.UdtfFixtures$CountingUdtf";
    refused(InvalidViewDefinitionException.class, "udtf '" + udtf + "' of view lance." + ns
        + ".nos does not tell its output schema; declare it with OPTIONS (output_schema = "
        + "'col1 TYPE, col2 TYPE')", "nos", create("nos", "USING UDTF '" + udtf
        + "' PARTITION BY name AS SELECT name, id AS price FROM " + src));

    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".withs USING UDTF '" + udtf + "' PARTITION "
        + "BY name OPTIONS (output_schema = 'category STRING, n BIGINT NOT NULL, total BIGINT "
        + "NOT NULL') AS SELECT name, id AS price FROM " + src);
    assertEquals(List.of("a|1|1", "b|1|2"), f.rows("SELECT * FROM lance." + ns + ".withs"));
  }

  @Test
  void unknownSourceTable() {
    refused(MaterializedViewNotFoundException.class, "does not exist", "u", create("u",
        "AS SELECT id FROM lance." + ns + ".missing"));
  }

  @Test
  void optionsThatDoNotFitTheKind() {
    refused(InvalidOptionException.class, "output_limit caps the rows of a chunker view", "o",
        create("o", "OPTIONS (output_limit = 5) AS SELECT id FROM " + src));
    refused(InvalidViewDefinitionException.class, "cannot have a udtf_spec", "o2",
        create("o2", "OPTIONS (input_columns = 'name') AS SELECT id, name FROM " + src));
    refused(InvalidOptionException.class, "output_limit caps the rows of a chunker view", "o3",
        create("o3", "USING UDTF 'io.lancerest.spark.mv.udtf.TopKUdtf' OPTIONS (output_limit = "
            + "5) AS SELECT id, score FROM " + src));
  }

  @Test
  void usingClassMissingOrOfTheWrongInterface() {
    refused(InvalidViewDefinitionException.class, "cannot be loaded", "c1", create("c1",
        "USING CHUNKER 'com.example.Nope' AS SELECT id, name FROM " + src));
    refused(InvalidViewDefinitionException.class, "does not implement", "c2", create("c2",
        "USING CHUNKER 'java.lang.String' AS SELECT id, name FROM " + src));
    refused(InvalidViewDefinitionException.class, "(it is a chunker: use USING CHUNKER)", "c3",
        create("c3", "USING UDTF 'io.lancerest.spark.mv.chunker.TextSplitter' AS SELECT id, "
            + "name FROM " + src));
  }

  @Test
  void envelopeShaMismatch() {
    refused(EnvelopeChecksumException.class, "does not match the SHA-256", "e", create("e",
        "USING CHUNKER 'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS (input_columns = "
            + "'name', chunk_size = 8, udtf_sha = '00ff') AS SELECT id, name FROM " + src));
  }

  @Test
  void partitionOptions() {
    CreateViewRequest both = new CreateViewRequest(List.of(ns, "p1"), false,
        MaterializedViewKind.UDTF, "SELECT id, score FROM " + src, null,
        "io.lancerest.spark.mv.udtf.TopKUdtf", "score", "id", Map.of(), Map.of(), true);
    refused(InvalidViewDefinitionException.class, "has both PARTITION BY score and PARTITION BY "
        + "INDEXED id", "p1", () -> f.views().create(both));
    refused(InvalidViewDefinitionException.class, "Partition column 'nope'", "p2",
        create("p2", "USING UDTF 'io.lancerest.spark.mv.udtf.TopKUdtf' PARTITION BY nope AS "
            + "SELECT id, score FROM " + src));
    refused(InvalidViewDefinitionException.class, "PARTITION BY is for UDTF views", "p3",
        create("p3", "PARTITION BY id AS SELECT id FROM " + src));
  }

  @Test
  void existingViewUnlessIfNotExists() {
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".dup AS SELECT id FROM " + src
        + " WITH NO DATA");
    MaterializedViewAlreadyExistsException e = assertThrows(
        MaterializedViewAlreadyExistsException.class, create("dup", "AS SELECT id FROM " + src));
    assertTrue(e.getMessage().contains("already exists"), e.getMessage());
    assertTrue(f.sql("CREATE MATERIALIZED VIEW IF NOT EXISTS lance." + ns + ".dup AS SELECT "
        + "id, name FROM " + src).isEmpty());
    // the existing definition is untouched: one projected column, never refreshed
    assertEquals(List.of("id"), List.of(f.spark.table("lance." + ns + ".dup").columns()));
    assertEquals(null, f.views().describe(List.of(ns, "dup")).state().watermark());
  }

  @Test
  void sourceWithoutStableRowIdsSaysHowToFixIt() {
    f.sql("CREATE TABLE lance." + ns + ".plain (id BIGINT) TBLPROPERTIES "
        + "('enable_stable_row_ids' = 'false')");
    f.sql("INSERT INTO lance." + ns + ".plain VALUES (1)");
    InvalidViewDefinitionException e = refused(InvalidViewDefinitionException.class,
        "does not have stable row ids", "nr", create("nr", "AS SELECT id FROM lance." + ns
            + ".plain"));
    assertTrue(e.getMessage().contains("TBLPROPERTIES ('enable_stable_row_ids' = 'true') AS "
        + "SELECT * FROM lance." + ns + ".plain"), e.getMessage());
  }

  @Test
  void refreshToAVersionOlderThanTheWatermark() {
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".old AS SELECT id FROM " + src);
    InvalidOptionException e = assertThrows(InvalidOptionException.class, () -> f.sql(
        "REFRESH MATERIALIZED VIEW lance." + ns + ".old WITH (src_version = 1)"));
    assertTrue(e.getMessage().contains("src_version 1 is older than the version view lance."
        + ns + ".old already reflects (2)"), e.getMessage());
  }
}
