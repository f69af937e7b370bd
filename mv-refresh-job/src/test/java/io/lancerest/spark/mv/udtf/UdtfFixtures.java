package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.fragments.LanceReads;
import io.lancerest.spark.mv.function.BatchUdtf;
import io.lancerest.spark.mv.function.UdtfContext;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.lance.WriteParams;

/** Local Lance tables, a SparkSession and small UDTFs for the UDTF tests. */
final class UdtfFixtures {
  /** Calls per "run tag:partition key", shared by every task (local mode: one JVM). */
  static final Map<String, AtomicInteger> CALLS = new ConcurrentHashMap<>();

  private UdtfFixtures() {}

  /** A session of the JVM's SparkContext ({@code TestSpark}: 2 local threads). */
  static SparkSession spark() {
    SparkSession s = io.lancerest.spark.mv.TestSpark.newSession();
    s.conf().set("spark.sql.shuffle.partitions", "4");
    return s;
  }

  static final StructType ITEMS = new StructType()
      .add("category", DataTypes.StringType, true)
      .add("name", DataTypes.StringType, false)
      .add("price", DataTypes.LongType, false);

  static Row item(String category, String name, long price) {
    return RowFactory.create(category, name, price);
  }

  /**
   * A new table of {@link #ITEMS} at version 1: categories a (3 rows), b (2), c (2), d (1) and
   * NULL (2); {@link #ITEM_COUNTS} is what {@link CountingUdtf} makes of it.
   */
  static void writeTenItems(SparkSession spark, String uri) {
    writeItems(spark, uri, List.of(
        item("a", "a1", 1), item("a", "a2", 2), item("a", "a3", 3),
        item("b", "b1", 10), item("b", "b2", 20),
        item("c", "c1", 100), item("c", "c2", 200),
        item("d", "d1", 1000),
        item(null, "n1", 5), item(null, "n2", 6)), false);
  }

  /** {@link #COUNTS} of every partition of {@link #writeTenItems}, sorted. */
  static final List<String> ITEM_COUNTS = List.of(
      "[a,3,6]", "[b,2,30]", "[c,2,300]", "[d,1,1000]", "[null,2,11]");

  /** Writes {@code rows} of {@link #ITEMS} to a new Lance table, or appends to it. */
  static void writeItems(SparkSession spark, String uri, List<Row> rows, boolean append) {
    Dataset<Row> df = spark.createDataFrame(rows, ITEMS);
    df.write().format("lance").mode(append ? "append" : "errorifexists").save(uri);
  }

  /** Every column of the Lance table at {@code location}, version {@code version}. */
  static UdtfSource wholeTable(String location, long version) {
    return new UdtfSource(LanceLocation.of(location, Map.of()), version, (spark, withRowId) -> {
      Dataset<Row> df = LanceReads.load(spark, location, Map.of(), version);
      return withRowId ? df.select(df.col("*"), df.col("_rowid")) : df;
    });
  }

  /** Refreshes the view in {@code t} from {@code source} at its version. */
  static UdtfRefreshResult refresh(SparkSession spark, UdtfSource source, ViewTables t,
      UdtfDefinition def, RefreshOptions options) {
    return UdtfRefresh.run(new RefreshContext(spark, t.viewName(), options.jobId(), null),
        v -> source, t, source.version(), def, options);
  }

  static long latestVersion(String uri) {
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(uri, a)) {
      return ds.version();
    }
  }

  static Map<String, String> schemaMetadata(String uri) {
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(uri, a)) {
      return ds.getSchema().getCustomMetadata();
    }
  }

  /** Creates the empty view table with the output schema (what CREATE does). */
  static void createView(String uri, StructType output) {
    Schema arrow = LanceArrowUtils.toArrowSchema(output, "UTC", true);
    try (BufferAllocator a = new RootAllocator()) {
      org.lance.Dataset.create(a, uri, arrow,
          new WriteParams.Builder().withEnableStableRowIds(true).build()).close();
    }
  }

  static Schema arrow(StructType s) {
    return LanceArrowUtils.toArrowSchema(s, "UTC", true);
  }

  /** The rows of a Lance table (latest, or at {@code version}), sorted by their text. */
  static List<String> rows(SparkSession spark, String uri, Long version) {
    var reader = spark.read().format("lance").option("path", uri);
    if (version != null) {
      reader = reader.option("version", version.toString());
    }
    List<String> out = new ArrayList<>();
    for (Row r : reader.load().collectAsList()) {
      out.add(r.toString());
    }
    out.sort(Comparator.naturalOrder());
    return out;
  }

  static int calls(String tag, String key) {
    AtomicInteger n = CALLS.get(tag + ":" + key);
    return n == null ? 0 : n.get();
  }

  /** Output: {@code category string, n long, total long} per partition. */
  static final StructType COUNTS = new StructType()
      .add("category", DataTypes.StringType, true)
      .add("n", DataTypes.LongType, false)
      .add("total", DataTypes.LongType, false);

  /**
   * Counts and sums {@code price} per partition. Options: {@code tag} (call counting), {@code
   * fail_key} + {@code fail_times} (throw on that key's first N calls, after reading half of
   * its rows), {@code bad_output} (return a string where a long is declared), {@code
   * touch_view} (on key a, commit a config change to that table: a concurrent writer).
   */
  public static final class CountingUdtf implements BatchUdtf {
    @Override
    public Iterator<Row> process(UdtfContext ctx, Iterator<Row> rows) {
      String key = String.valueOf(ctx.partitionKey());
      int call = CALLS.computeIfAbsent(ctx.option("tag", "") + ":" + key,
          k -> new AtomicInteger()).incrementAndGet();
      int priceIndex = ctx.inputSchema().fieldIndex("price");
      long n = 0;
      long total = 0;
      boolean fail = key.equals(ctx.option("fail_key", null))
          && call <= Integer.parseInt(ctx.option("fail_times", "0"));
      while (rows.hasNext()) {
        Row r = rows.next();
        n++;
        total += r.getLong(priceIndex);
        if (fail && n == 2) {
          throw new IllegalStateException("boom on " + key + " (call " + call + ")");
        }
      }
      if (fail) {
        throw new IllegalStateException("boom on " + key + " (call " + call + ")");
      }
      String touch = ctx.option("touch_view", null);
      if (touch != null && key.equals("a")) {
        try (BufferAllocator a = new RootAllocator();
            org.lance.Dataset ds = org.lance.Dataset.open(touch, a)) {
          ds.updateConfig(Map.of("touched_by", "a concurrent writer"));
        }
      }
      Object totalValue = ctx.options().containsKey("bad_output") ? "oops" : (Object) total;
      return List.of(RowFactory.create(ctx.partitionKey(), n, totalValue)).iterator();
    }
  }

  /** Per partition: its key, its row count and the index of the Spark task that ran it. */
  public static final class TaskRecordingUdtf implements BatchUdtf {
    @Override
    public Iterator<Row> process(UdtfContext ctx, Iterator<Row> rows) {
      long n = 0;
      while (rows.hasNext()) {
        rows.next();
        n++;
      }
      long task = org.apache.spark.TaskContext.get().partitionId();
      return List.of(RowFactory.create(String.valueOf(ctx.partitionKey()), n, task)).iterator();
    }
  }
}
