package io.lancerest.examples.connect;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The Spark Connect side of SparkConnectTest: a program built against the Spark Connect JVM
 * client only (not spark-sql), which the test compiles and runs in a JVM of its own. It connects
 * to the URL of its argument with {@code SparkSession.builder().remote(url)} and runs the steps
 * it reads on standard input, one a line: {@code <label> <verb> <argument>}.
 *
 * <ul>
 *   <li>{@code sql <statement>}: {@code spark.sql(statement)}, its rows collected;
 *   <li>{@code table <name>}: {@code spark.table(name)}, ordered by its first column;
 *   <li>{@code table-at <name> <version>}:
 *       {@code spark.read().option("versionAsOf", v).table(name)};
 *   <li>{@code append <name> <- <select>}: {@code spark.sql(select).writeTo(name).append()};
 *   <li>{@code create <name> <- <select>}: {@code spark.sql(select).writeTo(name).create()};
 *   <li>{@code conf <key>=<value>}: {@code spark.conf().set(key, value)} (a session conf);
 *   <li>{@code await-job <view>}: {@code SHOW JOBS FOR view LIMIT 1} until its status is not
 *       RUNNING (at most 90 s);
 *   <li>{@code version -}: the client library's Spark version and {@code spark.version()}.
 * </ul>
 * {@code ${job_id}} in an argument stands for the last {@code job_id} a step returned. For each
 * step it prints {@code @@ <label> row col=value<TAB>col=value...} per row and {@code @@ <label>
 * ok}, or {@code @@ <label> error <exception class>: <message>} (line breaks as {@code " // "}),
 * then goes on with the next step; {@code @@ end} after the last one.
 */
public final class ConnectScript {
  private static String jobId = "";

  private ConnectScript() {}

  public static void main(String[] args) throws Exception {
    SparkSession spark = SparkSession.builder().remote(args[0]).getOrCreate();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
        StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      line = line.strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] p = line.split("\\s+", 3);
      String label = p[0];
      try {
        if (p[1].equals("version")) {
          // the client library's own version, and the one spark.version() reports (the server's)
          System.out.println("@@ " + label + " row client="
              + SparkSession.class.getPackage().getImplementationVersion() + "\tserver="
              + spark.version());
        }
        for (Row r : step(spark, p[1], p.length > 2 ? p[2].replace("${job_id}", jobId) : "")) {
          print(label, r);
        }
        System.out.println("@@ " + label + " ok");
      } catch (Exception e) {
        System.out.println("@@ " + label + " error " + e.getClass().getName() + ": "
            + String.valueOf(e.getMessage()).replace("\n", " // "));
      }
    }
    System.out.println("@@ end");
    spark.close();
    System.exit(0);
  }

  private static List<Row> step(SparkSession spark, String verb, String arg) throws Exception {
    switch (verb) {
      case "sql":
        return spark.sql(arg).collectAsList();
      case "table": {
        Dataset<Row> t = spark.table(arg);
        return t.orderBy(t.columns()[0]).collectAsList();
      }
      case "table-at": {
        String[] a = arg.split("\\s+");
        Dataset<Row> t = spark.read().option("versionAsOf", a[1]).table(a[0]);
        return t.orderBy(t.columns()[0]).collectAsList();
      }
      case "append":
      case "create": {
        String[] a = arg.split("\\s*<-\\s*", 2);
        if (verb.equals("append")) {
          spark.sql(a[1]).writeTo(a[0]).append();
        } else {
          spark.sql(a[1]).writeTo(a[0]).create();
        }
        return List.of();
      }
      case "conf": {
        String[] kv = arg.split("=", 2);
        spark.conf().set(kv[0], kv[1]);
        return List.of();
      }
      case "await-job":
        return awaitJob(spark, arg);
      case "version":
        return List.of(); // printed by main
      default:
        throw new IllegalArgumentException("unknown verb " + verb);
    }
  }

  private static List<Row> awaitJob(SparkSession spark, String view) throws InterruptedException {
    long deadline = System.nanoTime() + 90_000_000_000L;
    while (true) {
      List<Row> rows = spark.sql("SHOW JOBS FOR " + view + " LIMIT 1").collectAsList();
      if (!rows.isEmpty() && !"RUNNING".equals(rows.get(0).getAs("status"))) {
        return rows;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the last job of " + view + " is still RUNNING after "
            + "90 s: " + rows);
      }
      Thread.sleep(200);
    }
  }

  private static void print(String label, Row r) {
    List<String> cells = new ArrayList<>();
    String[] names = r.schema().fieldNames();
    for (int i = 0; i < names.length; i++) {
      String v = String.valueOf(r.get(i));
      cells.add(names[i] + "=" + v);
      if (names[i].equals("job_id") && r.get(i) != null) {
        jobId = v;
      }
    }
    System.out.println("@@ " + label + " row " + String.join("\t", cells));
  }
}
