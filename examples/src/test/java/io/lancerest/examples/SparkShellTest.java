package io.lancerest.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.testing.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 * spark-shell, the real one: Spark's REPL ({@code org.apache.spark.repl.Main}) started by
 * {@code SparkSubmit} as {@code bin/spark-shell} starts it, with {@code --properties-file} the
 * docs' {@code examples/conf/spark-defaults.conf} (see {@link SparkClients}), reads {@code
 * examples/spark-shell/tour.scala} on its standard input: catalog statements, time travel and one
 * materialized view of each kind, refreshed, shown and described. The test reads the tables the
 * REPL prints ({@code Dataset.show}).
 */
@Tag("slow")
@Execution(ExecutionMode.CONCURRENT) // its work runs in child JVMs: next to the other classes
class SparkShellTest {
  /** The REPL's start, about 40 statements and three first refreshes, on a busy machine. */
  private static final Duration LIMIT = Duration.ofSeconds(420);

  @TempDir
  static Path dir;
  private static RestAdapter server;
  private static ChildJvm shell;
  private static String transcript;

  @BeforeAll
  static void runTheTour() throws Exception {
    server = SparkClients.restServer(dir);
    Path conf = SparkClients.confFile(dir, server);
    // bin/spark-shell: spark-submit --class org.apache.spark.repl.Main --name "Spark shell",
    // with -Dscala.usejavacp=true (the REPL compiles each line against the JVM's class path)
    shell = SparkClients.submit("spark-shell", conf, "org.apache.spark.repl.Main", "Spark shell",
        List.of("-Xmx2g", "-Dscala.usejavacp=true"), List.of(), "spark-shell");
    shell.input(Files.readString(script()));
    transcript = shell.awaitSuccess(LIMIT);
    System.out.println(transcript); // into the surefire report's -output.txt
  }

  @AfterAll
  static void stop() {
    if (shell != null) {
      shell.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private static Path script() {
    Path inModule = Path.of("spark-shell", "tour.scala");
    return Files.exists(inModule) ? inModule : Path.of("examples", "spark-shell", "tour.scala");
  }

  @Test
  void tablesAndTimeTravel() {
    assertEquals(List.of(), table("create namespace"));
    assertEquals(List.of("1|tea|5", "2|tea|9", "3|coffee|7", "4|coffee|8"), rows("select"));
    assertEquals(List.of("1|tea|5", "2|tea|9", "3|coffee|7"), rows("time travel"));
  }

  @Test
  void eachKindIsCreatedAndRefreshed() {
    assertEquals("DONE|query|3|0", result("query view"));
    assertEquals("DONE|chunker|6|0", result("chunker view"));
    assertEquals("DONE|udtf|2|0", result("udtf view"));
    // after one more row: the query and chunker views add only what it brings
    assertEquals("DONE|query|1|0", result("refresh good"));
    assertEquals("DONE|chunker|2|0", result("refresh sentences"));
    assertEquals("DONE|udtf", result("refresh best").substring(0, 9));
    assertEquals(List.of("2|90", "3|70", "4|80", "5|100"), rows("read good"));
    assertEquals(List.of("1|Green tea", "1|Black tea.", "2|Oolong.", "3|Espresso", "3|Latte.",
        "4|Mocha.", "5|Matcha", "5|Sencha."), rows("read sentences"));
    assertEquals(List.of("coffee|4|8|1", "tea|5|10|1"), rows("read best"));
  }

  @Test
  void showAndDescribe() {
    assertEquals(List.of("tour|best", "tour|good", "tour|sentences"),
        rows("show views").stream().sorted().toList());
    Map<String, String> info = new LinkedHashMap<>();
    table("describe").forEach(r -> info.put(r.get("info_name"), r.get("info_value")));
    assertEquals("tour.best", info.get("View"));
    assertEquals("udtf", info.get("Kind"));
    assertEquals("tour.docs", info.get("Source"));
    assertTrue(info.get("Function").contains(
        "\"class_name\":\"io.lancerest.spark.mv.udtf.TopKUdtf\""), info.get("Function"));
    assertTrue(info.get("Last job").contains("\"status\":\"DONE\""), info.toString());
  }

  @Test
  void noStatementFailed() {
    // the REPL prints a failed statement's exception, or a line that does not compile, at the
    // start of a line (Spark's own log lines start with the time)
    Pattern failure = Pattern.compile(
        "^([a-z][\\w$]*\\.)+[A-Z][\\w$]*(Exception|Error)\\b.*|^<console>:\\d+: error:.*");
    List<String> failures = Arrays.stream(transcript.split("\n"))
        .filter(l -> failure.matcher(l).matches()).toList();
    assertEquals(List.of(), failures, transcript);
  }

  /** status, kind, rows_inserted, rows_deleted of a CREATE or REFRESH. */
  private static String result(String label) {
    List<Map<String, String>> t = table(label);
    assertEquals(1, t.size(), label + ": " + t);
    return SparkClients.outcome(t.get(0));
  }

  private static List<String> rows(String label) {
    return table(label).stream().map(r -> String.join("|", r.values())).toList();
  }

  /**
   * The table {@code Dataset.show(100, false)} printed after the line {@code ==> label}: one map
   * per row, column name to cell, in column order (no rows and no columns: an empty list).
   */
  private static List<Map<String, String>> table(String label) {
    List<String> lines = Arrays.asList(transcript.split("\n"));
    int at = lines.indexOf("==> " + label);
    assertTrue(at >= 0, "the REPL did not print '==> " + label + "'; its output:\n" + transcript);
    int top = at + 1;
    while (top < lines.size() && !lines.get(top).startsWith("+")) {
      top++;
    }
    assertTrue(top + 2 < lines.size(), "no table after '==> " + label + "':\n" + transcript);
    List<String> header = cells(lines.get(top + 1));
    List<Map<String, String>> out = new ArrayList<>();
    for (int i = top + 3; i < lines.size() && lines.get(i).startsWith("|"); i++) {
      List<String> c = cells(lines.get(i));
      Map<String, String> row = new LinkedHashMap<>();
      for (int j = 0; j < header.size(); j++) {
        row.put(header.get(j), c.get(j));
      }
      out.add(row);
    }
    return header.isEmpty() ? List.of() : out;
  }

  private static List<String> cells(String line) {
    String inner = line.substring(1, line.length() - 1);
    return inner.isEmpty() ? List.of()
        : Arrays.stream(inner.split("\\|", -1)).map(String::strip).toList();
  }
}
