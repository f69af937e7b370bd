package io.lancerest.examples.bench;

import io.lancerest.embeddings.MiniLmEmbedding;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.util.LongAccumulator;

/**
 * Benchmark (not a test): the shipped embedding ({@link MiniLmEmbedding}) called in a plain Spark
 * {@code mapPartitions} job over N short texts, the way a user would write it by hand: each task
 * opens the model, embeds its partition in batches and closes the model. This is the peer of an
 * embedding backfill of a computed column over the same texts on the same cores. The texts (5 to
 * 16 words each, generated from the row number) are cached before the timed rounds; one small
 * warm-up round, then {@code rounds} rounds; the figure is the median. Each round also prints
 * the vectors' count and an order-independent hash of them, the same for every round. Run
 * (repository root):
 *
 * <pre>
 * mvn -B -ntp -q -Pquickstart -DskipTests -pl examples -am verify \
 *   -Dquickstart.main=io.lancerest.examples.bench.EmbeddingMapPartitionsBenchmark \
 *   [-Dquickstart.args="texts=20000 partitions=4 rounds=3 batch=64 threads=1"]
 * </pre>
 *
 * <p>{@code partitions} defaults to the cores of {@code local[*]}; {@code batch} is the rows per
 * {@code compute} call; {@code threads} the function's option.
 */
public final class EmbeddingMapPartitionsBenchmark {
  private static final String[] WORDS = ("the a data lake table vector search spark engine "
      + "column row commit fragment index query view refresh backfill model text embedding "
      + "server catalog namespace cluster executor driver task partition file version schema "
      + "guitar market bread river mountain city morning evening quickly slowly bright dark "
      + "reads writes builds keeps finds grows opens closes").split(" ");

  private EmbeddingMapPartitionsBenchmark() {}

  /** The text of row {@code i}: a function of {@code i} alone, so every run embeds the same. */
  static String text(long i) {
    SplittableRandom r = new SplittableRandom(i);
    int n = 5 + r.nextInt(12);
    StringBuilder b = new StringBuilder();
    for (int w = 0; w < n; w++) {
      b.append(w == 0 ? "" : " ").append(WORDS[r.nextInt(WORDS.length)]);
    }
    return b.append('.').toString();
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = ViewBench.args(argv);
    long texts = Long.parseLong(args.getOrDefault("texts", "20000"));
    int rounds = Integer.parseInt(args.getOrDefault("rounds", "3"));
    int batch = Integer.parseInt(args.getOrDefault("batch", "64"));
    Map<String, String> options = Map.of("threads", args.getOrDefault("threads", "1"));
    SparkSession spark = SparkSession.builder().master("local[*]")
        .appName("EmbeddingMapPartitionsBenchmark").config("spark.ui.enabled", "false")
        .getOrCreate();
    try {
      spark.sparkContext().setLogLevel(args.getOrDefault("log", "WARN"));
      int cores = spark.sparkContext().defaultParallelism();
      int partitions = Integer.parseInt(args.getOrDefault("partitions",
          Integer.toString(cores)));
      Dataset<String> all = spark.range(0, texts, 1, partitions)
          .map((MapFunction<Long, String>) EmbeddingMapPartitionsBenchmark::text,
              Encoders.STRING())
          .cache();
      System.out.printf("mapPartitions embedding: %d texts, %d partitions, local[*] with %d "
          + "cores, batch %d, options %s%n", all.count(), partitions, cores, batch, options);

      Dataset<String> warmUp = all.limit((int) Math.min(texts, 200L * partitions))
          .repartition(partitions);
      round(spark, warmUp, batch, options, "warm-up");
      List<Double> seconds = new ArrayList<>();
      for (int r = 1; r <= rounds; r++) {
        seconds.add(round(spark, all, batch, options, "round " + r).seconds());
      }
      seconds.sort(null);
      double median = seconds.get(seconds.size() / 2);
      System.out.printf("median %.2f s: %.0f texts/s%n", median, texts / median);
    } finally {
      spark.stop();
    }
  }

  /** A round's wall-clock seconds, and the count and summed hash of its vectors. */
  record Round(double seconds, long vectors, long hash) {}

  /**
   * One job over {@code texts}; prints and returns its time, and the count and sum of {@code
   * Arrays.hashCode(float[])} of its vectors.
   */
  static Round round(SparkSession spark, Dataset<String> texts, int batch,
      Map<String, String> options, String label) {
    LongAccumulator openNanos = spark.sparkContext().longAccumulator("model open");
    long t0 = System.nanoTime();
    Row sums = texts.mapPartitions((MapPartitionsFunction<String, Long>) it ->
        embedPartition(it, batch, options, openNanos), Encoders.LONG())
        .agg(functions.count("value"), functions.sum("value")).first();
    double s = (System.nanoTime() - t0) / 1e9;
    System.out.printf("%s: %.2f s, %.0f texts/s, vectors %d, hash %d, model opens %.2f s "
        + "summed over tasks%n", label, s, sums.getLong(0) / s, sums.getLong(0),
        sums.isNullAt(1) ? 0 : sums.getLong(1), openNanos.value() / 1e9);
    return new Round(s, sums.getLong(0), sums.isNullAt(1) ? 0 : sums.getLong(1));
  }

  /** A task's work: the model opened once, the partition embedded batch by batch. */
  private static Iterator<Long> embedPartition(Iterator<String> it, int batch,
      Map<String, String> options, LongAccumulator openNanos) throws Exception {
    List<Long> hashes = new ArrayList<>();
    long t0 = System.nanoTime();
    try (MiniLmEmbedding f = new MiniLmEmbedding()) {
      f.open(options);
      openNanos.add(System.nanoTime() - t0);
      List<Row> rows = new ArrayList<>(batch);
      while (it.hasNext()) {
        rows.add(RowFactory.create(it.next()));
        if (rows.size() == batch || !it.hasNext()) {
          for (float[] v : f.compute(rows)) {
            hashes.add((long) Arrays.hashCode(v));
          }
          rows.clear();
        }
      }
    }
    return hashes.iterator();
  }
}
