package io.lancerest.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.namespace.RestAdapter;

/**
 * {@link SqlRunner} on small scripts, from a file and from standard input, against lance-core's
 * dir server, in a session built from spark-defaults.conf as the runner's main builds it: the
 * printed tables, the one-line errors, and what happens after an error in each case.
 */
class SqlRunnerTest {
  @TempDir
  static Path dir;
  private static RestAdapter server;
  private static String uri;
  private static SparkSession spark;

  @BeforeAll
  static void start() throws Exception {
    Path warehouse = Files.createDirectories(dir.resolve("warehouse"));
    server = new RestAdapter("dir", Map.of("root", warehouse.toString()), "127.0.0.1", 0);
    server.start();
    uri = "http://127.0.0.1:" + server.getPort();
    spark = ExampleSpark.session("sql-runner-test", uri);
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
    if (server != null) {
      server.close();
    }
  }

  /** What one run printed and returned. */
  private record Run(int exit, String out, String err) {}

  private static Run run(String[] args, InputStream stdin) throws IOException {
    return run(args, stdin, dir);
  }

  private static Run run(String[] args, InputStream stdin, Path callerDir) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    SqlRunner.Options options = SqlRunner.Options.parse(args);
    int exit;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        SqlRunner.Script script = SqlRunner.Script.open(options, callerDir, stdin)) {
      exit = new SqlRunner(spark, o, e, options.maxRows()).run(script, false);
    }
    return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static InputStream noInput() {
    return new ByteArrayInputStream(new byte[0]);
  }

  @Test
  void fileRunsStatementByStatementAndStopsAtTheFirstError() throws IOException {
    Files.writeString(dir.resolve("store.sql"), """
        -- a namespace, a table, rows; names resolve in the default catalog lance
        CREATE NAMESPACE store;
        CREATE TABLE store.items (id BIGINT, category STRING, price DOUBLE);
        INSERT INTO store.items VALUES
          (1, 'tea', 3.5),
          (2, 'tea; green', 4.0),  -- a ';' inside a string is no end
          (3, 'cake', NULL);
        SELECT id, category, price FROM store.items ORDER BY id;
        SELECT * FROM store.nope;
        SELECT 'never run';
        """);
    Run r = run(new String[] {"--file", "store.sql"}, noInput());

    assertEquals(1, r.exit(), r.err());
    assertTrue(r.out().contains("""
        sql> INSERT INTO store.items VALUES
           >   (1, 'tea', 3.5),
           >   (2, 'tea; green', 4.0),
           >   (3, 'cake', NULL)
        OK ("""), r.out());
    assertTrue(r.out().contains("""
        sql> SELECT id, category, price FROM store.items ORDER BY id
        +---+----------+-----+
        |id |category  |price|
        +---+----------+-----+
        |1  |tea       |3.5  |
        |2  |tea; green|4.0  |
        |3  |cake      |NULL |
        +---+----------+-----+
        (3 rows, """), r.out());
    assertEquals(List.of(
        "ERROR at store.sql:9 in \"SELECT * FROM store.nope\": [TABLE_OR_VIEW_NOT_FOUND] The table "
            + "or view `store`.`nope` cannot be found. Verify the spelling and correctness of the "
            + "schema and catalog. If you did not qualify the name with a schema, verify the "
            + "current_schema() output, or qualify the name with the correct schema and catalog. "
            + "To tolerate the error on drop use DROP VIEW IF EXISTS or DROP TABLE IF EXISTS.; "
            + "line 1 pos 14",
        "SqlRunner: stopped at the first error; the statements after store.sql:9 were not run"),
        r.err().lines().toList());
    assertFalse(r.out().contains("never run"), r.out());
  }

  @Test
  void theShippedTryItScriptRuns() throws IOException {
    // examples/sql/try.sql, the file the docs point newcomers to (tests run in examples/).
    Run r = run(new String[] {"--file", "sql/try.sql"}, noInput(), Path.of("").toAbsolutePath());
    assertEquals(0, r.exit(), r.err());
    assertEquals("", r.err());
    assertTrue(r.out().contains("""
        sql> SELECT * FROM lance.shop.items VERSION AS OF 2
        +---+--------+-----+
        |id |category|price|
        +---+--------+-----+
        |1  |tea     |3.5  |
        +---+--------+-----+
        """), r.out());
    assertTrue(r.out().contains("""
        sql> SELECT category, rank, id, price FROM lance.shop.top3 ORDER BY category, rank
        +--------+----+---+-----+
        |category|rank|id |price|
        +--------+----+---+-----+
        |cake    |1   |3  |4.25 |
        |tea     |1   |2  |5.0  |
        |tea     |2   |1  |3.5  |
        |tea     |3   |5  |2.0  |
        +--------+----+---+-----+
        """), r.out());
    assertEquals(List.of("|DONE  |udtf|2", "|SKIPPED|udtf|2", "|DONE  |udtf|3"),
        r.out().lines().filter(l -> l.contains("|udtf|"))
            .map(l -> l.substring(l.indexOf('|', 1), l.indexOf("|udtf|") + 7)).toList(),
        r.out());
  }

  @Test
  void standardInputGoesOnAfterAnError() throws IOException {
    String script = """
        CREATE NAMESPACE cafe;
        CREATE TABLE cafe.orders (id BIGINT, item STRING);
        INSERT INTO cafe.orders VALUES (1, 'tea'), (2, 'cake'), (3, 'tea');
        SELEC 1;
        INSERT INTO cafe.orders VALUES (4, 'scone');
        SELECT id, upper(item) AS item
          FROM cafe.orders
          WHERE item <> 'tea' ORDER BY id;
        -- the version the first INSERT made; no ';' needed at the end
        SELECT id, item FROM cafe.orders VERSION AS OF 2 ORDER BY id
        """;
    Run r = run(new String[0], new ByteArrayInputStream(script.getBytes(StandardCharsets.UTF_8)));

    assertEquals(1, r.exit(), r.err());
    assertEquals(List.of(
        "ERROR at stdin:4 in \"SELEC 1\": [PARSE_SYNTAX_ERROR] Syntax error at or near 'SELEC'.; "
            + "line 1 pos 0",
        "SqlRunner: 1 of 7 statements failed"), r.err().lines().toList());
    assertTrue(r.out().contains("""
        +---+-----+
        |id |item |
        +---+-----+
        |2  |CAKE |
        |4  |SCONE|
        +---+-----+
        (2 rows, """), r.out());
    assertTrue(r.out().contains("""
        sql> SELECT id, item FROM cafe.orders VERSION AS OF 2 ORDER BY id
        +---+----+
        |id |item|
        +---+----+
        |1  |tea |
        |2  |cake|
        |3  |tea |
        +---+----+
        (3 rows, """), r.out());
  }

  @Test
  void catalogErrorsNameTheExceptionAndTheOption() throws IOException {
    // The catalog's own exceptions carry no Spark error class: the line names the exception.
    String script = "SET spark.sql.catalog.typo=io.lancerest.spark.catalog.LanceRestCatalog;\n"
        + "SET spark.sql.catalog.typo.uri=" + uri + ";\n"
        + "SET spark.sql.catalog.typo.cache.ttl=5;\n"
        + "SHOW NAMESPACES IN typo;\n";
    Run r = run(new String[] {"-e", script}, noInput());
    assertEquals(1, r.exit(), r.err());
    String first = r.err().lines().findFirst().orElseThrow();
    assertTrue(first.startsWith("ERROR at -e:4 in \"SHOW NAMESPACES IN typo\": "
        + "ClientConfigException: Unknown option(s) [cache.ttl] for catalog 'typo' "), first);
  }

  @Test
  void resultsAreCutOnlyAtMaxRowsAndSaySo() throws IOException {
    Run r = run(new String[] {"--max-rows", "2", "-e",
        "SELECT id, repeat('x', 40) AS wide, CAST(NULL AS STRING) AS nothing, "
            + "'a\nb' AS two_lines FROM range(3)"}, noInput());
    assertEquals(0, r.exit(), r.err());
    String x40 = "x".repeat(40);
    assertTrue(r.out().contains("|id |wide" + " ".repeat(36) + "|nothing|two_lines|\n"
        + "+---+" + "-".repeat(40) + "+-------+---------+\n"
        + "|0  |" + x40 + "|NULL   |a\\nb     |\n"
        + "|1  |" + x40 + "|NULL   |a\\nb     |\n"), r.out());
    assertTrue(r.out().contains("(the first 2 rows; there are more: --max-rows N shows more, "),
        r.out());
    assertFalse(r.out().contains("|2  |"), r.out());
  }

  @Test
  void statementsSplitAtSemicolonsOutsideStringsAndComments() throws IOException {
    String text = """
        -- only a comment; not a statement
        SELECT 'a;b' AS "x;y", `c;d` FROM t; SELECT 2
          /* a block comment; with a semicolon */ AS two;

        SELECT 'it\\'s -- not a comment' -- a comment; 'unclosed
        ;
        /* a comment alone; */
        SHOW TABLES""";
    SqlStatements s = new SqlStatements(new BufferedReader(new StringReader(text)), null);
    List<SqlStatements.Statement> all = new ArrayList<>();
    for (SqlStatements.Statement st = s.next(); st != null; st = s.next()) {
      all.add(st);
    }
    assertEquals(List.of(
        new SqlStatements.Statement("SELECT 'a;b' AS \"x;y\", `c;d` FROM t", 2),
        new SqlStatements.Statement(
            "SELECT 2\n  /* a block comment; with a semicolon */ AS two", 2),
        new SqlStatements.Statement("SELECT 'it\\'s -- not a comment'", 5),
        new SqlStatements.Statement("SHOW TABLES", 8)), all);
  }

  @Test
  void badCommandLinesAndMissingFilesSayWhat() {
    assertEquals("unknown option --url", assertThrows(IllegalArgumentException.class,
        () -> SqlRunner.Options.parse(new String[] {"--url", "x"})).getMessage());
    assertEquals("--header takes KEY=VALUE, got 'X-Tenant'", assertThrows(
        IllegalArgumentException.class,
        () -> SqlRunner.Options.parse(new String[] {"--header", "X-Tenant"})).getMessage());
    assertEquals("--warehouse is the embedded server's folder; with --uri the server has its "
        + "own", assertThrows(IllegalArgumentException.class, () -> SqlRunner.Options.parse(
            new String[] {"--uri", uri, "--warehouse", "w"})).getMessage());
    SqlRunner.Options options = SqlRunner.Options.parse(
        new String[] {"--token", "env:LANCE_TOKEN", "--header", "X-Tenant=acme", "-f", "no.sql"});
    assertEquals(Map.of("spark.sql.catalog.lance.token", "env:LANCE_TOKEN",
        "spark.sql.catalog.lance.header.X-Tenant", "acme"), options.settings());
    IllegalArgumentException literal = assertThrows(IllegalArgumentException.class,
        () -> SqlRunner.Options.parse(new String[] {"--token", "s3cr3t-value", "-e", "SELECT 1"}));
    assertEquals("--token takes env:VAR or file:PATH, not the secret itself (a command line "
        + "shows in ps and the shell history)", literal.getMessage());
    assertTrue(SqlRunner.Options.parse(new String[] {"--api-key", "file:key.txt", "-e", "SELECT 1"})
        .settings().get("spark.sql.catalog.lance.api_key").matches("file:/.*key\\.txt"),
        "a relative file: is taken from the caller's directory");
    IOException e = assertThrows(IOException.class,
        () -> SqlRunner.Script.open(options, dir, noInput()));
    assertEquals("cannot read the file " + dir.resolve("no.sql") + " (--file no.sql)",
        e.getMessage());
  }
}
