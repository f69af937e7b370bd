package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.connector.LanceLocation;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;
import org.lance.index.DistanceType;
import org.lance.index.Index;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.Query;
import org.lance.ipc.ScanOptions;
import org.lance.schema.LanceField;

/**
 * IVF partition membership of a source table's vector index, for {@code PARTITION BY INDEXED}.
 *
 * <p>What lance-core 4.0.0's Java API offers: {@code Dataset.getIndexStatistics(name)} returns
 * the index type, metric, the IVF centroids and every partition's size (per delta index), and the
 * number of unindexed rows; nothing returns the partition of a row, and a scan cannot add a
 * partition-id column. ({@code describeIndices()} fails on vector indexes in 4.0.0.)
 *
 * <p>How membership is obtained: not by re-assigning vectors to their nearest centroid (that
 * would reimplement the index's assignment, and rounding or ties could disagree with it), but by
 * asking the index itself. A nearest-neighbour query whose key is centroid {@code p}, probing
 * exactly one partition ({@code minimum_nprobes = maximum_nprobes = 1}) and asking for {@code k =
 * size of p} results, returns the rows stored in the probed partition and nothing else, because
 * every row is indexed (checked). The probed partition is the centroid nearest to the key, which
 * is {@code p} itself when no other centroid is at distance 0 from it, or for the dot metric when
 * {@code c_p·c_p > c_p·c_q} for every other {@code q} (both checked, under the index metric and
 * under L2). Each query runs in a Spark task on its own partitions.
 *
 * <p>The result is then verified before any UDTF call: the partitions must cover every live row
 * of the source version exactly once (row count and distinct row ids). Anything else fails the
 * refresh with an error; a wrong membership is never used.
 *
 * <p>Refused, with the reason in the error: no vector index on the column; an HNSW sub-index
 * (its in-partition search is a graph walk that measurably misses members even with {@code
 * ef = k}); Hamming distance; unindexed rows (they belong to no IVF partition: optimize the index
 * first); centroids that do not pass the self-probe check above.
 */
public final class IvfPartitions {
  /** The constant input column carrying the IVF partition id. */
  public static final String PARTITION_ID = "_partition_id";

  private IvfPartitions() {}

  /**
   * The vector index of one column, as its statistics describe it.
   *
   * @param sizes rows per IVF partition, summed over the index's delta segments
   */
  public record IvfIndex(String name, String indexType, String metric, List<float[]> centroids,
      long[] sizes, long unindexedRows) implements java.io.Serializable {
    public int numPartitions() {
      return sizes.length;
    }
  }

  /**
   * Reads and checks the vector index of {@code column} at {@code version} ({@code null}:
   * latest). Called at CREATE and at every refresh.
   *
   * @throws UdtfValidationException no usable index; the message says why and what to do
   */
  public static IvfIndex inspect(LanceLocation source, Long version, String column) {
    try (BufferAllocator allocator = new RootAllocator();
        org.lance.Dataset ds = open(allocator, source, version)) {
      return inspect(ds, source.uri(), column);
    }
  }

  /** {@link #inspect(LanceLocation, Long, String)} of the source as the caller opened it. */
  static IvfIndex inspect(org.lance.Dataset ds, String location, String column) {
    Integer fieldId = null;
    for (LanceField f : ds.getLanceSchema().fields()) {
      if (f.getName().equals(column)) {
        fieldId = f.getId();
      }
    }
    if (fieldId == null) {
      throw new UdtfValidationException("PARTITION BY INDEXED " + column + ": source table '"
          + location + "' has no column '" + column + "'");
    }
    String indexName = null;
    for (Index i : ds.getIndexes()) {
      if (i.fields().equals(List.of(fieldId))) {
        String type = String.valueOf(i.indexType());
        if (type.equals("VECTOR") || type.startsWith("IVF")) {
          indexName = i.name();
        }
      }
    }
    if (indexName == null) {
      throw new UdtfValidationException("PARTITION BY INDEXED " + column + ": source table '"
          + location + "' has no vector index on column '" + column + "'. Create an IVF "
          + "index first (e.g. CREATE INDEX … USING IVF_FLAT / IVF_PQ), then create the view.");
    }
    return describe(column, indexName, ds.getIndexStatistics(indexName));
  }

  @SuppressWarnings("unchecked")
  static IvfIndex describe(String column, String indexName, Map<String, Object> stats) {
    String type = String.valueOf(stats.get("index_type")).toUpperCase(Locale.ROOT);
    String where = "PARTITION BY INDEXED " + column + " (index '" + indexName + "', " + type + ")";
    if (!type.startsWith("IVF")) {
      throw new UdtfValidationException(where + ": not an IVF index, so it has no partitions");
    }
    if (type.contains("HNSW")) {
      throw new UdtfValidationException(where + ": an HNSW sub-index searches each IVF "
          + "partition by walking a graph, which does not reliably return all of a partition's "
          + "rows, so lance-core 4.0.0 gives no exact membership for it. Index the column with "
          + "IVF_FLAT, IVF_PQ or IVF_SQ for a partitioned view.");
    }
    List<Map<String, Object>> segments = (List<Map<String, Object>>) stats.get("indices");
    if (segments == null || segments.isEmpty()) {
      throw new UdtfValidationException(where + ": lance-core reported no index segments");
    }
    String metric = String.valueOf(segments.get(0).get("metric_type")).toLowerCase(Locale.ROOT);
    List<float[]> centroids = centroids(segments.get(0));
    long[] sizes = new long[centroids.size()];
    for (Map<String, Object> seg : segments) {
      if (!sameCentroids(centroids, centroids(seg))
          || !metric.equalsIgnoreCase(String.valueOf(seg.get("metric_type")))) {
        throw new UdtfValidationException(where + ": its delta segments use different IVF "
            + "centroids, so partition ids are not comparable across them. Rebuild the index.");
      }
      List<Map<String, Object>> parts = (List<Map<String, Object>>) seg.get("partitions");
      for (int p = 0; p < sizes.length; p++) {
        sizes[p] += ((Number) parts.get(p).get("size")).longValue();
      }
    }
    long unindexed = ((Number) stats.getOrDefault("num_unindexed_rows", 0L)).longValue();
    checkSelfProbe(where, metric, centroids);
    return new IvfIndex(indexName, type, metric, centroids, sizes, unindexed);
  }

  private static List<float[]> centroids(Map<String, Object> segment) {
    @SuppressWarnings("unchecked")
    List<List<Number>> raw = (List<List<Number>>) segment.get("centroids");
    List<float[]> out = new ArrayList<>();
    if (raw == null) {
      return out;
    }
    for (List<Number> c : raw) {
      float[] v = new float[c.size()];
      for (int d = 0; d < v.length; d++) {
        v[d] = c.get(d).floatValue();
      }
      out.add(v);
    }
    return out;
  }

  private static boolean sameCentroids(List<float[]> a, List<float[]> b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      if (!java.util.Arrays.equals(a.get(i), b.get(i))) {
        return false;
      }
    }
    return true;
  }

  /** Each centroid must be the unique nearest centroid to itself (see the class comment). */
  static void checkSelfProbe(String where, String metric, List<float[]> centroids) {
    if (centroids.isEmpty()) {
      throw new UdtfValidationException(where + ": lance-core reported no IVF centroids");
    }
    if (!List.of("l2", "cosine", "dot", "euclidean").contains(metric)) {
      throw new UdtfValidationException(where + ": distance '" + metric + "' is not supported "
          + "for partitioned views (L2, cosine and dot are)");
    }
    for (int p = 0; p < centroids.size(); p++) {
      for (int q = 0; q < centroids.size(); q++) {
        if (p == q) {
          continue;
        }
        boolean ok = distance("l2", centroids.get(p), centroids.get(q)) > 0
            && distance(metric, centroids.get(p), centroids.get(q))
                > distance(metric, centroids.get(p), centroids.get(p));
        if (!ok) {
          throw new UdtfValidationException(where + ": centroid " + q + " is as near to "
              + "centroid " + p + " as " + p + " itself under " + metric + " distance, so "
              + "partition " + p + " cannot be probed on its own and its members cannot be "
              + "listed exactly. Rebuild the index (or use L2).");
        }
      }
    }
  }

  static double distance(String metric, float[] a, float[] b) {
    double dot = 0;
    double na = 0;
    double nb = 0;
    double l2 = 0;
    for (int i = 0; i < a.length; i++) {
      dot += (double) a[i] * b[i];
      na += (double) a[i] * a[i];
      nb += (double) b[i] * b[i];
      double d = (double) a[i] - b[i];
      l2 += d * d;
    }
    return switch (metric) {
      case "dot" -> -dot;
      case "cosine" -> na == 0 || nb == 0 ? 1 : 1 - dot / Math.sqrt(na * nb);
      default -> l2;
    };
  }

  /**
   * {@code (_rowid int64, _partition_id int32)} for every row of the source at {@code version},
   * computed by Spark tasks and verified to cover each live row exactly once. The result is
   * persisted (it is small: 12 bytes a row); the caller unpersists it.
   */
  static Dataset<Row> membership(SparkSession spark, LanceLocation source,
      org.lance.Dataset opened, String column, IvfIndex index) {
    long version = opened.version();
    String location = source.uri();
    if (index.unindexedRows() > 0) {
      throw new UdtfValidationException("PARTITION BY INDEXED " + column + ": "
          + index.unindexedRows() + " rows of source '" + location + "' at version " + version
          + " are not covered by vector index '" + index.name() + "', so they belong to no IVF "
          + "partition. Build the index again (ALTER TABLE … CREATE INDEX " + index.name()
          + " USING … replaces it) or extend it with lance-core's Dataset.optimizeIndices, then "
          + "refresh again.");
    }
    List<Integer> ids = new ArrayList<>();
    for (int p = 0; p < index.numPartitions(); p++) {
      if (index.sizes()[p] > 0) {
        ids.add(p);
      }
    }
    int slices = Math.max(1, Math.min(ids.size(), spark.sparkContext().defaultParallelism()));
    var rows = JavaSparkContext.fromSparkContext(spark.sparkContext())
        .parallelize(ids, slices)
        .mapPartitions(new Probe(location, source.storageOptions(), version, column, index));
    StructType schema = new StructType()
        .add("_rowid", DataTypes.LongType, false)
        .add(PARTITION_ID, DataTypes.IntegerType, false);
    Dataset<Row> members = spark.createDataFrame(rows, schema).persist(StorageLevel.MEMORY_AND_DISK());
    Row check = members.agg(functions.count(functions.lit(1)),
        functions.countDistinct(functions.col("_rowid"))).first();
    long live = opened.countRows();
    if (check.getLong(0) != live || check.getLong(1) != live) {
      members.unpersist();
      throw new UdtfRefreshException("PARTITION BY INDEXED " + column + ": the IVF partitions "
          + "of index '" + index.name() + "' listed " + check.getLong(0) + " rows ("
          + check.getLong(1) + " distinct) but source '" + location + "' has " + live
          + " rows at version " + version + ", so membership is not exact. Nothing was "
          + "committed. Rebuild the vector index and refresh again.");
    }
    return members;
  }

  private static org.lance.Dataset open(BufferAllocator allocator, LanceLocation source,
      Long version) {
    try {
      return source.open(allocator, version);
    } catch (RuntimeException e) {
      throw new UdtfValidationException("Cannot open source table '" + source.uri() + "'"
          + (version == null ? "" : " at version " + version) + ": " + e.getMessage(), e);
    }
  }

  /** Lists the members of some IVF partitions by probing each alone (runs in a task). */
  private record Probe(String location, Map<String, String> storageOptions, long version,
      String column, IvfIndex index)
      implements org.apache.spark.api.java.function.FlatMapFunction<Iterator<Integer>, Row> {
    /** Storage options hold credentials: only their keys are shown. */
    @Override
    public String toString() {
      return "Probe{" + location + "@" + version + ", " + column + ", storage options "
          + storageOptions.keySet() + "}";
    }

    @Override
    public Iterator<Row> call(Iterator<Integer> partitions) throws Exception {
      List<Row> out = new ArrayList<>();
      DistanceType metric = switch (index.metric()) {
        case "cosine" -> DistanceType.Cosine;
        case "dot" -> DistanceType.Dot;
        default -> DistanceType.L2;
      };
      try (BufferAllocator allocator = new RootAllocator();
          org.lance.Dataset ds = open(allocator, LanceLocation.of(location, storageOptions),
              version)) {
        while (partitions.hasNext()) {
          int p = partitions.next();
          Query q = new Query.Builder()
              .setColumn(column)
              .setKey(index.centroids().get(p))
              .setK(Math.toIntExact(index.sizes()[p]))
              .setMinimumNprobes(1)
              .setMaximumNprobes(1)
              .setDistanceType(metric)
              .build();
          ScanOptions options = new ScanOptions.Builder()
              .columns(List.of())
              .nearest(q)
              .withRowId(true)
              .build();
          try (LanceScanner scan = ds.newScan(options); ArrowReader reader = scan.scanBatches()) {
            while (reader.loadNextBatch()) {
              VectorSchemaRoot root = reader.getVectorSchemaRoot();
              FieldVector rowId = root.getVector("_rowid");
              for (int i = 0; i < root.getRowCount(); i++) {
                out.add(RowFactory.create(((Number) rowId.getObject(i)).longValue(), p));
              }
            }
          }
        }
      }
      return out.iterator();
    }
  }
}
