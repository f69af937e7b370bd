package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.FunctionEnvelope;
import io.lancerest.spark.mv.SourceQuery;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;

/**
 * Chunker refresh versus a hand-written Spark flatMap of the same splitter, on local[2]; not a
 * test. The baseline writes through lance-spark's own data source ({@code
 * df.write().format("lance")}), not through the REST catalog. Run (from the repository root):
 * <pre>
 * mvn -o -q install -DskipTests
 * mvn -o -q -pl mv-refresh-job test-compile dependency:build-classpath -Dmdep.outputFile=/tmp/cp
 * java -Xmx3g $(sed 's/ / /' &lt;&lt;&lt; "$OPENS") -cp mv-refresh-job/target/test-classes:\
 * mv-refresh-job/target/classes:$(cat /tmp/cp) io.lancerest.spark.mv.chunker.ChunkerBenchmark \
 * [documents=200000] [chars_per_document=1000]
 * </pre>
 * ({@code $OPENS}: the {@code --add-opens} flags of {@code spark.java17.opens} in the parent pom.)
 */
public final class ChunkerBenchmark {
  private ChunkerBenchmark() {}

  private static final Map<String, String> SPLIT = Map.of("chunk_size", "256", "overlap", "32");

  public static void main(String[] args) throws Exception {
    int docs = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
    int chars = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
    Path dir = Files.createTempDirectory("chunker-bench");
    SparkSession spark = SparkSession.builder().master("local[2]").appName("chunker-bench")
        .config("spark.ui.enabled", "false").getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    // The refresh logs its phase timings (source scan, expansion, view scan, commit) at INFO.
    org.apache.logging.log4j.core.config.Configurator.setLevel(
        ChunkerRefresh.class.getName(), org.apache.logging.log4j.Level.INFO);

    String source = dir.resolve("docs.lance").toString();
    SourceTables.create(source);
    Random rnd = new Random(42);
    for (int from = 0; from < docs; from += 25_000) {
      int to = Math.min(docs, from + 25_000);
      SourceTables.append(source, SourceTables.docs(from, to, i -> text(rnd, chars)), 25_000);
    }
    FunctionEnvelope f = FunctionEnvelope.java(TextSplitter.class.getName(), "text_splitter",
        "1", LanceArrowUtils.toArrowSchema(TextSplitter.OUTPUT, "UTC", false), List.of("doc"),
        false, SPLIT);
    ChunkerDefinition def = new ChunkerDefinition(List.of(new SourceQuery.OutputColumn("id",
        "id"), new SourceQuery.OutputColumn("doc", "doc")), null, f, null, false);

    // Warm-up (JIT, Spark and lance-core start-up) on a small copy, for both contenders.
    String small = dir.resolve("small.lance").toString();
    SourceTables.create(small);
    SourceTables.append(small, SourceTables.docs(0, 5_000, i -> text(rnd, chars)), 2_500);
    flatMap(spark, small, dir.resolve("warm-flat.lance").toString());
    String warm = dir.resolve("warm-view.lance").toString();
    ChunkerRefresh.createViewTable(spark, ChunkerRefresh.Tables.of(small, warm), def);
    ChunkerRefresh.run(spark, small, warm, def, ChunkerRefreshOptions.defaults());

    long t0 = System.nanoTime();
    long flatRows = flatMap(spark, source, dir.resolve("flat.lance").toString());
    double flat = seconds(t0);

    String view = dir.resolve("view.lance").toString();
    ChunkerRefresh.createViewTable(spark, ChunkerRefresh.Tables.of(source, view), def);
    t0 = System.nanoTime();
    ChunkerRefreshResult full = ChunkerRefresh.run(spark, source, view, def,
        ChunkerRefreshOptions.defaults());
    double refresh = seconds(t0);

    // Three incremental rounds of +1 % each; the median is reported (the machine is noisy).
    int extra = Math.max(1, docs / 100);
    double[] incs = new double[3];
    ChunkerRefreshResult inc = null;
    for (int round = 0; round < incs.length; round++) {
      int from = docs + round * extra;
      SourceTables.append(source, SourceTables.docs(from, from + extra, i -> text(rnd, chars)),
          25_000);
      t0 = System.nanoTime();
      inc = ChunkerRefresh.run(spark, source, view, def, ChunkerRefreshOptions.defaults());
      incs[round] = seconds(t0);
    }
    double[] sorted = incs.clone();
    java.util.Arrays.sort(sorted);
    double incremental = sorted[1];

    System.out.printf(Locale.ROOT, "documents=%d chars/doc=%d children=%d (flatMap wrote %d)%n",
        docs, chars, full.rowsInserted(), flatRows);
    System.out.printf(Locale.ROOT, "flatMap + lance-spark write : %7.2f s  %9.0f parents/s  "
        + "%10.0f children/s%n", flat, docs / flat, flatRows / flat);
    System.out.printf(Locale.ROOT, "chunker full refresh        : %7.2f s  %9.0f parents/s  "
        + "%10.0f children/s  ratio %.2fx (target <= 1.2x)%n", refresh, docs / refresh,
        full.rowsInserted() / refresh, refresh / flat);
    System.out.printf(Locale.ROOT, "incremental (+%d docs, 1%%) : %7.2f s  %9.0f parents/s  "
        + "%10.0f children/s  %.1f%% of full (target <= 10%%); rounds %.2f / %.2f / %.2f s%n",
        extra, incremental, inc.parentsExpanded() / incremental,
        inc.rowsInserted() / incremental, 100 * incremental / refresh, incs[0], incs[1],
        incs[2]);
    spark.stop();
  }

  private static double seconds(long t0) {
    return (System.nanoTime() - t0) / 1e9;
  }

  private static String text(Random rnd, int chars) {
    StringBuilder sb = new StringBuilder(chars + 16);
    while (sb.length() < chars) {
      int len = 2 + rnd.nextInt(9);
      for (int i = 0; i < len; i++) {
        sb.append((char) ('a' + rnd.nextInt(26)));
      }
      sb.append(rnd.nextInt(12) == 0 ? ". " : " ");
    }
    return sb.toString();
  }

  /** The baseline: the same splitter in a flatMap, written by lance-spark in one job. */
  private static long flatMap(SparkSession spark, String source, String target) {
    StructType out = new StructType()
        .add("__source_row_id", DataTypes.LongType, false)
        .add("__child_index", DataTypes.IntegerType, false)
        .add("id", DataTypes.LongType, false)
        .add("chunk", DataTypes.StringType, false)
        .add("char_offset", DataTypes.IntegerType, false);
    Dataset<Row> in = spark.read().format("lance").load(source).selectExpr("_rowid", "id", "doc");
    FlatMapFunction<Row, Row> split = r -> {
      TextSplitter t = TextSplitter.of(null, 256, 32);
      Iterator<Row> it = t.split(r.getString(2));
      List<Row> rows = new ArrayList<>();
      int i = 0;
      while (it.hasNext()) {
        Row c = it.next();
        rows.add(RowFactory.create(r.getLong(0), i++, r.getLong(1), c.get(0), c.get(1)));
      }
      return rows.iterator();
    };
    Dataset<Row> children = in.flatMap(split, Encoders.row(out));
    children.write().format("lance").save(target);
    return spark.read().format("lance").load(target).count();
  }
}
