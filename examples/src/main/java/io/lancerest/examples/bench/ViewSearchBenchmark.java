package io.lancerest.examples.bench;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.DescribeTableRequest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.lance.Dataset;
import org.lance.Transaction;
import org.lance.Version;
import org.lance.index.DistanceType;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.vector.IvfBuildParams;
import org.lance.index.vector.PQBuildParams;
import org.lance.index.vector.VectorIndexParams;

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
 *       score order) must be equal; both also against a brute-force token match;</li>
 *   <li>(d) the refreshed view's carried index against an index built from scratch in place, on
 *       the same version of the same view (same fragments, same deleted rows), measured as (b):
 *       it separates what the carried index costs from what the table's state costs (lance-core
 *       4.0.0 fetches a search's rows by row id, in time proportional to the rows of a fragment
 *       with deleted rows; a view created afresh has none).</li>
 * </ul>
 * The views keep the default maintenance policy, so a refresh may compact its view (the vector
 * index then gets a delta segment for the moved rows, and is built again from its recipe past 8
 * segments, inside that REFRESH); {@code maintenance=off} turns it off on the refreshed views to
 * measure the refresh alone.
 *
 * <p>Arguments, all optional: {@code rows=1000000 rounds=10 partitions=<rows/4000, at least 16>
 * sub-vectors=16 nprobes=20 refine=0 queries=200 maintenance=on warehouse=DIR log=WARN}; {@code
 * refine=F} re-ranks F &times; k candidates by their exact distance (lance's refine factor; 0:
 * none) in every search, as IVF_PQ searches usually do, whose recall is otherwise the PQ
 * codes'. After every round it also prints the refreshed view's median search latency over 20
 * of the queries, with its index's segments, as a profile of (b). The measurements of (b) and
 * (c) are in {@link ViewSearchMeasures}.
 */
public final class ViewSearchBenchmark {
  private static final String NS = "lance.vsearch";
  static final int DIM = 128;
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
        bench.run(rows, rounds, new PqShape(partitions, subVectors),
            new ViewSearchMeasures.Probe(nprobes, refine), queries);
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

  private void run(long rows, int rounds, PqShape pq, ViewSearchMeasures.Probe probe,
      int queries) throws Exception {
    String pqOptions = pq.options();
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
          ViewSearchMeasures.nearest(ds, keys[q % 20], probe);
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
    try (Dataset r = Dataset.open(location(indexed), allocator);
        Dataset f = Dataset.open(location(fresh), allocator)) {
      ViewSearchMeasures.search(r, f, probe, keys, ViewSearchMeasures.Sides.REFRESHED_FRESH);
    }

    // (c) full-text search: the refreshed fts view against one built afresh
    String freshText = NS + ".vtf";
    createView(freshText, textSelect, false, "");
    spark.sql("ALTER TABLE " + freshText + " CREATE INDEX ft USING fts (body) WITH ("
        + FTS_OPTIONS + ")");
    try (Dataset r = Dataset.open(location(text), allocator);
        Dataset f = Dataset.open(location(freshText), allocator)) {
      ViewSearchMeasures.fullText(spark, text, r, f, rows, rounds);
    }

    // (d) the refreshed view's own rows (same fragments, same deleted rows), indexed from scratch
    // in place: what a carried index costs against any index on the same table state
    long carried = version(indexed);
    t = System.nanoTime();
    try (Dataset ds = Dataset.open(location(indexed), allocator)) {
      ds.createIndex(List.of("vec"), IndexType.IVF_PQ, Optional.of("pq"), IndexParams.builder()
          .setVectorIndexParams(VectorIndexParams.withIvfPqParams(DistanceType.L2,
              new IvfBuildParams.Builder().setNumPartitions(pq.partitions()).build(),
              new PQBuildParams.Builder().setNumSubVectors(pq.subVectors()).build())).build(),
          true);
    }
    System.out.printf("vi: IVF_PQ index rebuilt in place over the refreshed view in %.1f s; "
        + "index now %s%n", ViewBench.secs(t), segments(indexed));
    try (Dataset now = Dataset.open(location(indexed), allocator);
        Dataset before = now.checkoutVersion(carried)) {
      ViewSearchMeasures.search(before, now, probe, keys, new ViewSearchMeasures.Sides("(d)",
          "carried", "rebuilt-in-place", false));
    }
    System.out.printf("%s after the measurements%n", ViewBench.loadAverage());
  }

  /** The IVF_PQ index's build parameters. */
  private record PqShape(int partitions, int subVectors) {
    String options() {
      return "num_partitions = " + partitions + ", num_sub_vectors = " + subVectors;
    }
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
}
