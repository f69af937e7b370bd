package io.lancerest.examples.bench;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.spark.sql.SparkSession;
import org.lance.Dataset;
import org.lance.ipc.FullTextQuery;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.Query;
import org.lance.ipc.ScanOptions;

/**
 * The measurements of {@link ViewSearchBenchmark} on datasets it opened: nearest-neighbour
 * latency and recall (b, d), full-text results of a refreshed index against a fresh one (c).
 */
final class ViewSearchMeasures {
  static final int K = 10;
  private static final int DIM = ViewSearchBenchmark.DIM;

  private ViewSearchMeasures() {}

  /** How every nearest-neighbour search runs: nprobes and refine factor. */
  record Probe(int nprobes, int refine) {}

  /**
   * Names for what {@link #search} compares: the part of the report, the first and second
   * dataset (the ratios are first / second), and whether the issue sets targets for it.
   */
  record Sides(String part, String first, String second, boolean targets) {
    static final Sides REFRESHED_FRESH = new Sides("(b)", "refreshed", "fresh", true);
  }

  /**
   * Median latency of {@code r}'s index against {@code f}'s, each query run on both (who goes
   * first changes every query), and recall@10 of {@code r} against {@code f} and of both against
   * an exact brute-force search.
   */
  static void search(Dataset r, Dataset f, Probe probe, float[][] keys, Sides sides)
      throws Exception {
    int nprobes = probe.nprobes();
    for (float[] key : keys) { // warm-up: index files into the datasets' caches
      nearest(r, key, probe);
      nearest(f, key, probe);
    }
    List<Double> lr = new ArrayList<>();
    List<Double> lf = new ArrayList<>();
    List<List<Long>> gotR = new ArrayList<>();
    List<List<Long>> gotF = new ArrayList<>();
    for (int q = 0; q < keys.length; q++) {
      for (int turn = 0; turn < 2; turn++) { // who goes first changes every query
        boolean refreshedTurn = (q + turn) % 2 == 0;
        long t = System.nanoTime();
        List<Long> ids = nearest(refreshedTurn ? r : f, keys[q], probe);
        (refreshedTurn ? lr : lf).add(ViewBench.secs(t));
        (refreshedTurn ? gotR : gotF).add(ids);
      }
    }
    List<Set<Long>> exact = bruteForce(f, keys);
    double recallRF = 0;
    double recallR = 0;
    double recallF = 0;
    for (int q = 0; q < keys.length; q++) {
      recallRF += overlap(gotR.get(q), new HashSet<>(gotF.get(q)));
      recallR += overlap(gotR.get(q), exact.get(q));
      recallF += overlap(gotF.get(q), exact.get(q));
    }
    int n = keys.length;
    double mr = ViewBench.median(lr);
    double mf = ViewBench.median(lf);
    String a = sides.first();
    String b = sides.second();
    String target = sides.targets() ? " (target <= 1.2)" : "";
    System.out.printf("%s nearest k=%d nprobes=%d refine=%d, %d queries: median latency "
        + "%s %.2f ms / %s %.2f ms = %.3f%s; p90 %.2f / %.2f ms%n", sides.part(), K, nprobes,
        probe.refine(), n, a, mr * 1e3, b, mf * 1e3, mr / mf, target, p90(lr) * 1e3,
        p90(lf) * 1e3);
    System.out.printf("%s recall@%d of the %s index against the %s one %.4f%s; against exact "
        + "search: %s %.4f, %s %.4f (%s / %s %.3f)%n", sides.part(), K, a, b, recallRF / n,
        sides.targets() ? " (target >= 0.95)" : "", a, recallR / n, b, recallF / n, a, b,
        recallR / recallF);
    String suffix = sides.targets() ? " target 1.2" : "";
    System.out.printf("RESULT search nearest-latency-%s/%s %.3f%s%n", a, b, mr / mf, suffix);
    System.out.printf("RESULT search recall@10-%s-vs-%s %.4f%s%n", a, b, recallRF / n,
        sides.targets() ? " target 0.95" : "");
    System.out.printf("RESULT search recall@10-vs-exact-%s/%s %.3f%n", a, b, recallR / recallF);
  }

  private static double p90(List<Double> xs) {
    List<Double> s = new ArrayList<>(xs);
    s.sort(null);
    return s.get((int) (s.size() * 0.9));
  }

  private static double overlap(List<Long> got, Set<Long> want) {
    return got.stream().filter(want::contains).count() / (double) K;
  }

  static List<Long> nearest(Dataset ds, float[] key, Probe probe) throws Exception {
    Query.Builder q = new Query.Builder().setColumn("vec").setKey(key).setK(K)
        .setNprobes(probe.nprobes());
    if (probe.refine() > 0) {
      q.setRefineFactor(probe.refine());
    }
    return ids(ds, new ScanOptions.Builder().columns(List.of("id")).nearest(q.build()).build());
  }

  private static List<Long> ids(Dataset ds, ScanOptions o) throws Exception {
    List<Long> out = new ArrayList<>();
    try (LanceScanner s = ds.newScan(o); ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        BigIntVector v = (BigIntVector) r.getVectorSchemaRoot().getVector("id");
        for (int i = 0; i < v.getValueCount(); i++) {
          out.add(v.get(i));
        }
      }
    }
    return out;
  }

  /** The exact k nearest ids (L2) of each key, in one pass over the view's rows. */
  private static List<Set<Long>> bruteForce(Dataset ds, float[][] keys) throws Exception {
    int n = keys.length;
    double[][] best = new double[n][K];
    long[][] bestIds = new long[n][K];
    for (double[] b : best) {
      java.util.Arrays.fill(b, Double.MAX_VALUE);
    }
    float[] row = new float[DIM];
    try (LanceScanner s = ds.newScan(new ScanOptions.Builder().columns(List.of("id", "vec"))
        .build()); ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        VectorSchemaRoot root = r.getVectorSchemaRoot();
        BigIntVector id = (BigIntVector) root.getVector("id");
        FieldVector fv = root.getVector("vec");
        Float4Vector data = (Float4Vector) ((FixedSizeListVector) fv).getDataVector();
        for (int i = 0; i < id.getValueCount(); i++) {
          for (int d = 0; d < DIM; d++) {
            row[d] = data.get(i * DIM + d);
          }
          for (int q = 0; q < n; q++) {
            float[] key = keys[q];
            double dist = 0;
            for (int d = 0; d < DIM; d++) {
              double x = row[d] - key[d];
              dist += x * x;
            }
            double[] b = best[q];
            if (dist < b[K - 1]) {
              int j = K - 1;
              while (j > 0 && b[j - 1] > dist) {
                b[j] = b[j - 1];
                bestIds[q][j] = bestIds[q][j - 1];
                j--;
              }
              b[j] = dist;
              bestIds[q][j] = id.get(i);
            }
          }
        }
      }
    }
    List<Set<Long>> out = new ArrayList<>();
    for (long[] ids : bestIds) {
      Set<Long> s = new HashSet<>();
      for (long x : ids) {
        s.add(x);
      }
      out.add(s);
    }
    return out;
  }

  /**
   * (c): each query's results on the refreshed fts view ({@code r}, named {@code refreshed} for
   * the token match in Spark) equal the fresh index's ({@code f}).
   */
  static void fullText(SparkSession spark, String refreshed, Dataset r, Dataset f, long rows,
      int rounds) throws Exception {
    List<String> words = List.of("w7", "t123", "moved", "u3", "w7 u3", "moved w12",
        "doc" + (rows + 5), "doc" + (rows / 2 + 3));
    int equal = 0;
    for (String w : words) {
      List<Hit> hr = hits(r, w);
      List<Hit> hf = hits(f, w);
      boolean sameIds = hr.stream().map(Hit::id).toList().equals(hf.stream().map(Hit::id)
          .toList());
      double maxDiff = 0;
      for (int i = 0; i < Math.min(hr.size(), hf.size()); i++) {
        maxDiff = Math.max(maxDiff, Math.abs(hr.get(i).score() - hf.get(i).score()));
      }
      boolean same = sameIds && maxDiff <= 1e-5 * Math.max(1, Math.abs(hf.isEmpty() ? 0
          : hf.get(0).score()));
      equal += same ? 1 : 0;
      long brute = spark.sql("SELECT count(*) FROM " + refreshed + " WHERE arrays_overlap("
          + "split(body, ' '), array('" + String.join("', '", w.split(" ")) + "'))").first()
          .getLong(0);
      System.out.printf("(c) '%s': refreshed %,d hits, fresh %,d, token match %,d; ids in "
          + "score order %s, largest score difference %.3g (top score %.4f / %.4f): %s%n", w,
          hr.size(), hf.size(), brute, sameIds ? "equal" : "DIFFERENT", maxDiff,
          hr.isEmpty() ? 0 : hr.get(0).score(), hf.isEmpty() ? 0 : hf.get(0).score(),
          same ? "equal" : "NOT EQUAL");
    }
    System.out.printf("(c) full-text search after %d refreshes: %d of %d queries equal to a "
        + "fresh index (target: all)%n", rounds, equal, words.size());
    System.out.printf("RESULT search fts-queries-equal %d/%d target %d/%d%n", equal,
        words.size(), words.size(), words.size());
  }

  private record Hit(long id, float score) {}

  /** Every hit of {@code query}, by score (highest first), ties by id. */
  private static List<Hit> hits(Dataset ds, String query) throws Exception {
    List<Hit> out = new ArrayList<>();
    try (LanceScanner s = ds.newScan(new ScanOptions.Builder().columns(List.of("id"))
        .fullTextQuery(FullTextQuery.match(query, "body")).build());
        ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        VectorSchemaRoot root = r.getVectorSchemaRoot();
        BigIntVector id = (BigIntVector) root.getVector("id");
        FieldVector score = root.getVector("_score");
        for (int i = 0; i < id.getValueCount(); i++) {
          out.add(new Hit(id.get(i), ((Number) score.getObject(i)).floatValue()));
        }
      }
    }
    out.sort(Comparator.comparingDouble((Hit h) -> -h.score()).thenComparingLong(Hit::id));
    return out;
  }
}
