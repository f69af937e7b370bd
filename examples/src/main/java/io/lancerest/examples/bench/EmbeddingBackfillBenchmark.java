package io.lancerest.examples.bench;

import io.lancerest.embeddings.MiniLmEmbedding;
import io.lancerest.spark.computed.BackfillResult;
import io.lancerest.spark.computed.ComputedColumnSpec;
import io.lancerest.spark.computed.spark.ComputedColumns;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.SparkSession;

/**
 * Benchmark (not a test): an embedding backfill of a computed column ({@link MiniLmEmbedding})
 * over N short texts against the same model called in a plain Spark {@code mapPartitions} job
 * over the same texts on the same cores ({@link EmbeddingMapPartitionsBenchmark}'s job), target
 * &le; 1.1. The table is loaded in {@code loads} inserts (as many fragments or more); each round
 * adds a new computed column and backfills it, and runs the peer job, taking turns going first.
 * The figure is the median of the rounds' ratios; each backfill's column is checked against the
 * peer's vectors (count, and the sum of each vector's {@code Arrays.hashCode}).
 *
 * <pre>
 * mvn -B -ntp -q -Pquickstart -DskipTests -pl examples -am verify \
 *   -Dquickstart.main=io.lancerest.examples.bench.EmbeddingBackfillBenchmark \
 *   [-Dquickstart.args="texts=20000 loads=8 rounds=2 batch=64"]
 * </pre>
 */
public final class EmbeddingBackfillBenchmark {
  private static final String NS = "lance.embbench";
  private static final String T = NS + ".texts";

  private EmbeddingBackfillBenchmark() {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = ViewBench.args(argv);
    long texts = Long.parseLong(args.getOrDefault("texts", "20000"));
    int loads = Integer.parseInt(args.getOrDefault("loads", "8"));
    int rounds = Integer.parseInt(args.getOrDefault("rounds", "2"));
    int batch = Integer.parseInt(args.getOrDefault("batch", "64"));
    System.out.printf("EmbeddingBackfillBenchmark texts=%d loads=%d rounds=%d batch=%d; %d "
        + "cores, %s at the start%n", texts, loads, rounds, batch,
        Runtime.getRuntime().availableProcessors(), ViewBench.loadAverage());
    try (ViewBench b = ViewBench.start("embedding-backfill-bench", args)) {
      run(b.spark, texts, loads, rounds, batch);
    }
    System.out.printf("%s at the end%n", ViewBench.loadAverage());
  }

  private static void run(SparkSession spark, long texts, int loads, int rounds, int batch) {
    spark.sql("CREATE NAMESPACE " + NS);
    spark.sql("CREATE TABLE " + T + " (id BIGINT, text STRING)");
    spark.udf().register("bench_text", (org.apache.spark.sql.api.java.UDF1<Long, String>)
        EmbeddingMapPartitionsBenchmark::text, org.apache.spark.sql.types.DataTypes.StringType);
    // the peer's hash of a vector (Arrays.hashCode of its floats), for the column's vectors
    spark.udf().register("vec_hash", (org.apache.spark.sql.api.java.UDF1<
        scala.collection.Seq<Float>, Long>) v -> {
          float[] f = new float[v.size()];
          for (int i = 0; i < f.length; i++) {
            f[i] = v.apply(i);
          }
          return (long) java.util.Arrays.hashCode(f);
        }, org.apache.spark.sql.types.DataTypes.LongType);
    long per = texts / loads;
    for (int i = 0; i < loads; i++) {
      long from = i * per;
      long to = i == loads - 1 ? texts : from + per;
      spark.sql("INSERT INTO " + T + " SELECT id, bench_text(id) FROM range(" + from + ", " + to
          + ")");
    }
    int cores = spark.sparkContext().defaultParallelism();
    Dataset<String> peerTexts = spark.range(0, texts, 1, cores)
        .map((MapFunction<Long, String>) EmbeddingMapPartitionsBenchmark::text, Encoders.STRING())
        .cache();
    System.out.printf("%,d texts: table of %d loads, peer input %d partitions (cached)%n",
        peerTexts.count(), loads, cores);
    List<Double> ratios = new ArrayList<>();
    List<String> columns = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      int r = round;
      String column = "emb" + r;
      ComputedColumns.add(spark, T, new ComputedColumnSpec(column,
          MiniLmEmbedding.class.getName(), null, List.of("text"), Map.of(), false));
      columns.add(column);
      double[] backfill = new double[1];
      double[] peer = new double[1];
      BackfillResult[] result = new BackfillResult[1];
      Runnable ours = () -> {
        long t = System.nanoTime();
        result[0] = ComputedColumns.backfill(spark, T, column, Map.of("batch_size",
            String.valueOf(batch)));
        backfill[0] = ViewBench.secs(t);
      };
      EmbeddingMapPartitionsBenchmark.Round[] theirRound =
          new EmbeddingMapPartitionsBenchmark.Round[1];
      Runnable theirs = () -> {
        theirRound[0] = EmbeddingMapPartitionsBenchmark.round(spark, peerTexts, batch,
            Map.of("threads", "1"), "peer round " + r);
        peer[0] = theirRound[0].seconds();
      };
      if (r % 2 == 0) {
        ours.run();
        theirs.run();
      } else {
        theirs.run();
        ours.run();
      }
      org.apache.spark.sql.Row got = spark.sql("SELECT count(" + column + "), sum(vec_hash("
          + column + ")) FROM " + T).first();
      if (got.getLong(0) != theirRound[0].vectors() || got.getLong(1) != theirRound[0].hash()) {
        throw new IllegalStateException(column + ": " + got.getLong(0) + " vectors, hash "
            + got.getLong(1) + ", where the mapPartitions job computed " + theirRound[0]);
      }
      ratios.add(backfill[0] / peer[0]);
      System.out.printf("round %d: backfill %.1f s (%.0f texts/s; %s) / mapPartitions %.1f s = "
          + "%.3f%n", r, backfill[0], texts / backfill[0], result[0], peer[0],
          backfill[0] / peer[0]);
    }
    double median = ViewBench.median(ratios);
    System.out.printf("embedding backfill / mapPartitions, median of %d rounds: %.3f (target "
        + "<= 1.1)%n", rounds, median);
    System.out.printf("RESULT backfill embedding/mapPartitions %.3f target 1.1%n", median);
  }
}
