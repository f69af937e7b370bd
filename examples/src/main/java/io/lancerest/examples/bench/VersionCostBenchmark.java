package io.lancerest.examples.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.WriteParams;

/**
 * What the versions a Lance table keeps cost every later commit and open (lance-core 4.0.0, a
 * local folder): one table grows to 20, 200, 1,000 and 2,000 versions (each a config update, a
 * commit without data), and at each size the mean time of opening the latest version, checking
 * out an older one and committing are printed, with their ratio to the 20-version figures of
 * the same run. Why view maintenance removes old versions and the job log keeps a minute of
 * them (docs/materialized-views.md, "Size the retention to the refresh rate").
 *
 * <pre>
 *   mvn -B -ntp -Pquickstart -DskipTests -pl examples -am verify \
 *       -Dquickstart.main=io.lancerest.examples.bench.VersionCostBenchmark
 * </pre>
 */
public final class VersionCostBenchmark {
  private VersionCostBenchmark() {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = ViewBench.args(argv);
    int rounds = Integer.parseInt(args.getOrDefault("rounds", "20"));
    Path dir = Files.createTempDirectory("version-cost");
    String uri = dir.resolve("t.lance").toString();
    try (BufferAllocator a = new RootAllocator()) {
      Schema schema = new Schema(List.of(Field.nullable("id", new ArrowType.Int(64, true))));
      Dataset.create(a, uri, schema, new WriteParams.Builder().build()).close();
      double[] first = null;
      long made = 1;
      for (int target : new int[] {20, 200, 1000, 2000}) {
        try (Dataset ds = Dataset.open(uri, a)) {
          while (made < target) {
            ds.updateConfig(Map.of("k", "v" + made++));
          }
        }
        double[] ms = measure(a, uri, rounds, target / 2);
        made += rounds;
        if (first == null) {
          first = ms;
        }
        System.out.printf("%5d versions: open latest %.2f ms (%.1fx), check out one %.2f ms "
            + "(%.1fx), commit %.2f ms (%.1fx)%n", target, ms[0], ms[0] / first[0], ms[1],
            ms[1] / first[1], ms[2], ms[2] / first[2]);
      }
      System.out.println("version cost benchmark (" + ViewBench.loadAverage() + "), ratios "
          + "against 20 versions in the same run");
    } finally {
      io.lancerest.examples.Warehouses.delete(dir);
    }
  }

  /** Mean milliseconds of: opening the latest version, checking out {@code old}, a commit. */
  private static double[] measure(BufferAllocator a, String uri, int rounds, long old) {
    long t0 = System.nanoTime();
    for (int i = 0; i < rounds; i++) {
      try (Dataset ds = Dataset.open(uri, a)) {
        ds.version();
      }
    }
    double open = ViewBench.secs(t0) * 1000 / rounds;
    try (Dataset ds = Dataset.open(uri, a)) {
      t0 = System.nanoTime();
      for (int i = 0; i < rounds; i++) {
        try (Dataset c = ds.checkoutVersion(old)) {
          c.version();
        }
      }
      double checkout = ViewBench.secs(t0) * 1000 / rounds;
      t0 = System.nanoTime();
      for (int i = 0; i < rounds; i++) {
        ds.updateConfig(Map.of("m", "r" + i));
      }
      double commit = ViewBench.secs(t0) * 1000 / rounds;
      return new double[] {open, checkout, commit};
    }
  }
}
