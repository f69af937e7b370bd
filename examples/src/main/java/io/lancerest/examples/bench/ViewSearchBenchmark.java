package io.lancerest.examples.bench;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.DescribeTableRequest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.lance.Dataset;
import org.lance.Transaction;
import org.lance.Version;
import org.lance.ipc.FullTextQuery;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.Query;
import org.lance.ipc.ScanOptions;

/**
 * Views that serve search, in one JVM and one SparkSession over an in-process {@code
 * RestAdapter("dir")} server. Not a test: it prints figures and ratios. The source has R rows of
 * {@code (id, vec 128-d float vector, body text)}, vectors in 1,000 clusters; every view selects
 * {@code WHERE id % 20 <> 7}.
 * <ul>
 *   <li>(a) incremental refresh of a query view of the vectors carrying an IVF_PQ index versus
 *       the same refresh of an identical view without an index (target &le; 1.5, median of the
 *       rounds). Each round appends 1 % rows and updates 0.1 % ({@code id % 1000 = r}, spread
 *       over every fragment; the update moves the row's vector to another cluster and rewrites
 *       its text), then refreshes both views, taking turns going first. Per round it prints
 *       what each view's refresh committed (lance-core operations, with when each landed), what
 *       happened to the index (the job's message), and checks the view against its SELECT;</li>
 *   <li>(b) after the rounds (10 by default), nearest-neighbour search (lance-core {@code
 *       ScanOptions.nearest}, k = 10) on the refreshed view versus a view of the same SELECT
 *       created then, whose IVF_PQ index is built from scratch with the same options and
 *       searched with the same {@code nprobes}: median latency over the queries (target &le;
 *       1.2), recall@10 of the refreshed view against the fresh index (target &ge; 0.95), and
 *       of both against an exact brute-force search over the view's rows;</li>
 *   <li>(c) a view of the text with an fts index, refreshed in every round, against a view of
 *       the same rows with an fts index built afresh: each query's results (ids, and scores in
 *       score order) must be equal; both also against a brute-force token match.</li>
 * </ul>
 * The views keep the default maintenance policy, so a refresh may compact its view (after which
 * the vector index is built again from its recipe, inside that REFRESH); {@code maintenance=off}
 * turns it off on the refreshed views to measure the refresh alone.
 *
 * <p>Arguments, all optional: {@code rows=1000000 rounds=10 partitions=<rows/4000, at least 16>
 * sub-vectors=16 nprobes=20 refine=0 queries=200 maintenance=on warehouse=DIR log=WARN}; {@code
 * refine=F} re-ranks F &times; k candidates by their exact distance (lance's refine factor; 0:
 * none) in every search, as IVF_PQ searches usually do, whose recall is otherwise the PQ
 * codes'. After every round it also prints the refreshed view's median search latency over 20
 * of the queries, with its index's segments, as a profile of (b).
 */
public final class ViewSearchBenchmark {
  private static final String NS = "lance.vsearch";
  private static final int DIM = 128;
  private static final int K = 10;
  private static final String FILTER = "id % 20 <> 7";
  private static final String FTS_OPTIONS = "base_tokenizer = 'simple', language = 'English', "
      + "max_token_length = 40, lower_case = true, stem = false, remove_stop_words = false, "
      + "ascii_folding = false, with_position = false";

  private final SparkSession spark;
  private final String uri;
  private final BufferAllocator allocator = new RootAllocator();
  /** The TBLPROPERTIES of the refreshed views ({@code maintenance=off}), or none. */
  private final String maintenance;

  private ViewSearchBenchmark(SparkSession spark, String uri, boolean maintain) {
    this.spark = spark;
    this.uri = uri;
    this.maintenance = maintain ? "" : "'lancerest.mv.maintenance.enabled' = 'false'";
  }

  /** How every search of (b) runs: nprobes and refine factor. */
  private record Probe(int nprobes, int refine) {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = ViewBench.args(argv);
    long rows = Long.parseLong(args.getOrDefault("rows", "1000000"));
    int rounds = Integer.parseInt(args.getOrDefault("rounds", "10"));
    int partitions = Integer.parseInt(args.getOrDefault("partitions",
        String.valueOf(Math.max(16, rows / 4000))));
    int subVectors = Integer.parseInt(args.getOrDefault("sub-vectors", "16"));
    int nprobes = Integer.parseInt(args.getOrDefault("nprobes", "20"));
    int refine = Integer.parseInt(args.getOrDefault("refine", "0"));
    int queries = Integer.parseInt(args.getOrDefault("queries", "200"));
    String maintenance = args.getOrDefault("maintenance", "on");
    if (!maintenance.equals("on") && !maintenance.equals("off")) {
      throw new IllegalArgumentException("maintenance is on or off, got " + maintenance);
    }
    System.out.printf("ViewSearchBenchmark rows=%d rounds=%d partitions=%d sub-vectors=%d "
        + "nprobes=%d refine=%d queries=%d maintenance=%s; %d cores, %s at the start%n", rows,
        rounds, partitions, subVectors, nprobes, refine, queries, maintenance,
        Runtime.getRuntime().availableProcessors(), ViewBench.loadAverage());
    try (ViewBench b = ViewBench.start("vsearch-bench", args)) {
      ViewSearchBenchmark bench = new ViewSearchBenchmark(b.spark, b.uri(),
          maintenance.equals("on"));
      try {
        bench.run(rows, rounds, "num_partitions = " + partitions + ", num_sub_vectors = "
            + subVectors, new Probe(nprobes, refine), queries);
      } finally {
        bench.allocator.close();
      }
    }
    System.out.printf("%s at the end%n", ViewBench.loadAverage());
  }

  /** A 128-d vector of cluster {@code id % 1000} (shifted by {@code shift}) plus noise. */
  private static String vecSql(String shift) {
    return "transform(sequence(0, " + (DIM - 1) + "), d -> CAST(sin(((id + " + shift + ") % "
        + "1000) * (d + 1) * 0.731 + d * 1.3) + 0.3 * sin(id * (d + 1) * 1.618 + d) AS FLOAT))";
  }

  private void insert(String src, long from, long n) {
    spark.sql("INSERT INTO " + src + " SELECT id, " + vecSql("0") + ", concat('w', id % 101, "
        + "' t', id % 997, ' u', (id * 7) % 53, ' doc', id) FROM range(" + from + ", "
        + (from + n) + ")");
  }

  private void run(long rows, int rounds, String pqOptions, Probe probe, int queries)
      throws Exception {
    float[][] keys = keys(rows, queries);
    spark.sql("CREATE NAMESPACE " + NS);
    String src = NS + ".src";
    spark.sql("CREATE TABLE " + src + " (id BIGINT, vec ARRAY<FLOAT>, body STRING) TBLPROPERTIES "
        + "('vec.arrow.fixed-size-list.size' = '" + DIM + "')");
    long t = System.nanoTime();
    insert(src, 0, rows);
    System.out.printf("source: %,d rows loaded in %.1f s%n", rows, ViewBench.secs(t));
    String vecSelect = "SELECT id, vec FROM " + src + " WHERE " + FILTER;
    String textSelect = "SELECT id, body FROM " + src + " WHERE " + FILTER;
    String indexed = NS + ".vi";
    String plain = NS + ".vn";
    String text = NS + ".vt";
    t = System.nanoTime();
    createView(indexed, vecSelect, true, maintenance);
    System.out.printf("view vi created in %.1f s%n", ViewBench.secs(t));
    t = System.nanoTime();
    spark.sql("ALTER TABLE " + indexed + " CREATE INDEX pq USING ivf_pq (vec) WITH (" + pqOptions
        + ")");
    double buildFirst = ViewBench.secs(t);
    System.out.printf("vi: IVF_PQ index (%s) built in %.1f s%n", pqOptions, buildFirst);
    createView(plain, vecSelect, true, maintenance);
    createView(text, textSelect, false, maintenance);
    t = System.nanoTime();
    spark.sql("ALTER TABLE " + text + " CREATE INDEX ft USING fts (body) WITH (" + FTS_OPTIONS
        + ")");
    System.out.printf("vt: fts index built in %.1f s%n", ViewBench.secs(t));

    // (a) rounds of change + refresh. The views take turns going first.
    long appended = rows / 100;
    long next = rows;
    List<Double> withIndex = new ArrayList<>();
    List<Double> without = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      insert(src, next, appended);
      next += appended;
      String where = "id % 1000 = " + ((r * 7 + 3) % 1000);
      spark.sql("UPDATE " + src + " SET vec = " + vecSql("1 + " + r) + ", body = concat('moved "
          + "w', (id + " + (r + 1) + ") % 101, ' doc', id) WHERE " + where);
      double[] ti = new double[1];
      double[] tn = new double[1];
      String[] pi = new String[1];
      String[] pn = new String[1];
      Runnable a = () -> {
        long v = version(indexed);
        long s = System.currentTimeMillis();
        ti[0] = refresh(indexed);
        pi[0] = commits(indexed, v, s);
      };
      Runnable b = () -> {
        long v = version(plain);
        long s = System.currentTimeMillis();
        tn[0] = refresh(plain);
        pn[0] = commits(plain, v, s);
      };
      if (r % 2 == 0) {
        a.run();
        b.run();
      } else {
        b.run();
        a.run();
      }
      double tt = refresh(text);
      withIndex.add(ti[0]);
      without.add(tn[0]);
      System.out.printf("round %d (+%,d rows, %s updated): with IVF_PQ %.2f s, without %.2f s "
          + "= %.2f; fts view %.2f s%n", r, appended, where, ti[0], tn[0], ti[0] / tn[0], tt);
      System.out.printf("    vi commits: %s%n    vn commits: %s%n    vi job: %s%n    vt job: "
          + "%s%n", pi[0], pn[0], indexNote(indexed), indexNote(text));
      ViewBench.sameRows(spark, "round " + r + " (vi)", "SELECT id, vec FROM " + indexed,
          vecSelect);
      try (Dataset ds = Dataset.open(location(indexed), allocator)) {
        List<Double> l = new ArrayList<>();
        for (int q = 0; q < Math.min(20, keys.length) * 2; q++) { // the first pass warms up
          long t0 = System.nanoTime();
          nearest(ds, keys[q % 20], probe);
          if (q >= 20) {
            l.add(ViewBench.secs(t0));
          }
        }
        System.out.printf("    vi search: median %.2f ms over 20 queries; index %s%n",
            ViewBench.median(l) * 1e3, segments(indexed));
      }
    }
    double mi = ViewBench.median(withIndex);
    double mn = ViewBench.median(without);
    double sumI = withIndex.stream().mapToDouble(Double::doubleValue).sum();
    double sumN = without.stream().mapToDouble(Double::doubleValue).sum();
    System.out.printf("(a) incremental refresh with an IVF_PQ index / without: median %.2f / "
        + "%.2f s = %.3f (target <= 1.5); over all %d rounds (every rebuild included) %.1f / "
        + "%.1f s = %.3f%n", mi, mn, mi / mn, rounds, sumI, sumN, sumI / sumN);
    System.out.printf("RESULT search refresh-with-ivf_pq/without %.3f target 1.5%n", mi / mn);

    // (b) a view of the same rows whose index is built from scratch now
    String fresh = NS + ".vf";
    createView(fresh, vecSelect, true, "");
    t = System.nanoTime();
    spark.sql("ALTER TABLE " + fresh + " CREATE INDEX pq USING ivf_pq (vec) WITH ("
        + pqOptions + ")");
    System.out.printf("vf: the same rows, IVF_PQ index built from scratch in %.1f s (the first "
        + "one over %,d rows: %.1f s)%n", ViewBench.secs(t), rows, buildFirst);
    ViewBench.sameRows(spark, "the rounds (vi against vf)", "SELECT id, vec FROM " + indexed,
        "SELECT id, vec FROM " + fresh);
    System.out.printf("    vi index: %s%n    vf index: %s%n", segments(indexed),
        segments(fresh));
    search(indexed, fresh, probe, keys);

    // (c) full-text search: the refreshed fts view against one built afresh
    String freshText = NS + ".vtf";
    createView(freshText, textSelect, false, "");
    spark.sql("ALTER TABLE " + freshText + " CREATE INDEX ft USING fts (body) WITH ("
        + FTS_OPTIONS + ")");
    fullText(text, freshText, rows, rounds);
    System.out.printf("%s after the measurements%n", ViewBench.loadAverage());
  }

  private void createView(String view, String select, boolean vector, String properties) {
    List<String> p = new ArrayList<>();
    if (vector) {
      p.add("'vec.arrow.fixed-size-list.size' = '" + DIM + "'");
    }
    if (!properties.isEmpty()) {
      p.add(properties);
    }
    spark.sql("CREATE MATERIALIZED VIEW " + view + (p.isEmpty() ? "" : " TBLPROPERTIES ("
        + String.join(", ", p) + ")") + " AS " + select);
  }

  private double refresh(String view) {
    long t = System.nanoTime();
    Row r = spark.sql("REFRESH MATERIALIZED VIEW " + view).collectAsList().get(0);
    if (!"DONE".equals(r.getString(1))) {
      throw new IllegalStateException("REFRESH of " + view + " answered " + r);
    }
    return ViewBench.secs(t);
  }

  /** The index part of the view's last job message ({@code indexes: …}). */
  private String indexNote(String view) {
    List<Row> jobs = spark.sql("SHOW JOBS FOR " + view).collectAsList();
    String m = jobs.stream().max(Comparator.comparing(r -> r.getTimestamp(5))).orElseThrow()
        .getString(11);
    int i = m == null ? -1 : m.indexOf("indexes:");
    return i < 0 ? String.valueOf(m) : m.substring(i);
  }

  private String location(String view) {
    String[] parts = view.split("\\.");
    try (LanceRestClient client = LanceRestClient.create(Map.of("uri", uri))) {
      return client.describeTable(new DescribeTableRequest().id(List.of(parts[1], parts[2])))
          .getLocation();
    }
  }

  private long version(String view) {
    try (Dataset ds = Dataset.open(location(view), allocator)) {
      return ds.version();
    }
  }

  /**
   * The commits since {@code before}: each one's lance-core operation and when it landed,
   * seconds after {@code startMillis} (the REFRESH statement's start).
   */
  private String commits(String view, long before, long startMillis) {
    List<String> out = new ArrayList<>();
    try (Dataset ds = Dataset.open(location(view), allocator)) {
      for (Version v : ds.listVersions()) {
        if (v.getId() <= before) {
          continue;
        }
        String op;
        try (Dataset at = ds.checkoutVersion(v.getId())) {
          op = at.readTransaction().map(Transaction::operation).map(o -> o.name())
              .orElse("?");
        }
        out.add(String.format("%s @%.2f s", op, (v.getDataTime().toInstant().toEpochMilli()
            - startMillis) / 1e3));
      }
    }
    return String.join(", ", out);
  }

  /** The index's segments: rows each covers. */
  private String segments(String view) {
    try (Dataset ds = Dataset.open(location(view), allocator)) {
      Map<Integer, Long> rows = new java.util.HashMap<>();
      ds.getFragments().forEach(f -> rows.put(f.getId(), f.metadata().getNumRows()));
      List<String> out = new ArrayList<>();
      ds.getIndexes().forEach(i -> out.add(i.name() + ":" + i.fragments().orElse(List.of())
          .stream().mapToLong(f -> rows.getOrDefault(f, 0L)).sum()));
      return out.size() + " segments (live rows each: " + String.join(", ", out) + "), "
          + rows.size() + " fragments";
    }
  }

  /** (b): latency, and recall against the fresh index and against brute force. */
  /**
   * Search keys: the vectors of ids spread over the source's first {@code rows} (as {@link
   * #vecSql} computes them, before any update), each moved by a little noise.
   */
  private static float[][] keys(long rows, int queries) {
    Random random = new Random(42);
    float[][] keys = new float[queries][DIM];
    for (int q = 0; q < queries; q++) {
      long id = q * Math.max(1, rows / queries) + 5;
      for (int d = 0; d < DIM; d++) {
        keys[q][d] = (float) (Math.sin((id % 1000) * (d + 1) * 0.731 + d * 1.3)
            + 0.3 * Math.sin(id * (d + 1) * 1.618 + d) + random.nextGaussian() * 0.05);
      }
    }
    return keys;
  }

  private void search(String refreshed, String fresh, Probe probe, float[][] keys)
      throws Exception {
    int nprobes = probe.nprobes();
    try (Dataset r = Dataset.open(location(refreshed), allocator);
        Dataset f = Dataset.open(location(fresh), allocator)) {
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
      System.out.printf("(b) nearest k=%d nprobes=%d refine=%d, %d queries: median latency "
          + "refreshed %.2f ms / fresh %.2f ms = %.3f (target <= 1.2); p90 %.2f / %.2f ms%n", K,
          nprobes, probe.refine(), n, mr * 1e3, mf * 1e3, mr / mf, p90(lr) * 1e3,
          p90(lf) * 1e3);
      System.out.printf("(b) recall@%d of the refreshed view against the fresh index %.4f "
          + "(target >= 0.95); against exact search: refreshed %.4f, fresh %.4f (refreshed / "
          + "fresh %.3f)%n", K, recallRF / n, recallR / n, recallF / n, recallR / recallF);
      System.out.printf("RESULT search nearest-latency-refreshed/fresh %.3f target 1.2%n",
          mr / mf);
      System.out.printf("RESULT search recall@10-refreshed-vs-fresh %.4f target 0.95%n",
          recallRF / n);
    }
  }

  private static double p90(List<Double> xs) {
    List<Double> s = new ArrayList<>(xs);
    s.sort(null);
    return s.get((int) (s.size() * 0.9));
  }

  private static double overlap(List<Long> got, Set<Long> want) {
    return got.stream().filter(want::contains).count() / (double) K;
  }

  private static List<Long> nearest(Dataset ds, float[] key, Probe probe) throws Exception {
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

  /** (c): each query's results on the refreshed fts view equal the fresh index's. */
  private void fullText(String refreshed, String fresh, long rows, int rounds)
      throws Exception {
    List<String> words = List.of("w7", "t123", "moved", "u3", "w7 u3", "moved w12",
        "doc" + (rows + 5), "doc" + (rows / 2 + 3));
    int equal = 0;
    try (Dataset r = Dataset.open(location(refreshed), allocator);
        Dataset f = Dataset.open(location(fresh), allocator)) {
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
