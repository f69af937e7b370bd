package io.lancerest.spark.mv.udtf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.function.BatchUdtf;
import io.lancerest.spark.mv.function.UdtfContext;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.Transaction;
import org.lance.WriteParams;
import org.lance.index.DistanceType;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.vector.VectorIndexParams;
import org.lance.operation.Append;

/**
 * PARTITION BY INDEXED on a real IVF_FLAT index: a source of 600 4-d vectors around three
 * centres, in three fragments, indexed with 6 IVF partitions.
 */
class IvfPartitionsTest {
  private static final int DIM = 4;
  private static SparkSession spark;
  private static BufferAllocator allocator;
  @TempDir static Path dir;
  private static String source;

  @BeforeAll
  static void setUp() {
    spark = UdtfFixtures.spark();
    allocator = new RootAllocator();
    source = dir.resolve("vectors.lance").toString();
    createVectors(source, 600);
    try (Dataset ds = Dataset.open(source, allocator)) {
      IndexParams p = IndexParams.builder()
          .setVectorIndexParams(VectorIndexParams.ivfFlat(6, DistanceType.L2)).build();
      ds.createIndex(List.of("vec"), IndexType.IVF_FLAT, Optional.of("vec_idx"), p, true);
    }
  }

  @AfterAll
  static void tearDown() {
    allocator.close();
  }

  static final Schema VECTORS = new Schema(List.of(
      new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
      new Field("vec", FieldType.nullable(new ArrowType.FixedSizeList(DIM)), List.of(
          new Field("item", FieldType.notNullable(
              new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)), null)))));

  static void createVectors(String uri, int n) {
    Dataset.create(allocator, uri, VECTORS,
        new WriteParams.Builder().withEnableStableRowIds(true).build()).close();
    append(uri, 0, n);
  }

  static void append(String uri, int from, int to) {
    Random r = new Random(7 + from);
    try (VectorSchemaRoot root = VectorSchemaRoot.create(VECTORS, allocator)) {
      BigIntVector id = (BigIntVector) root.getVector(0);
      FixedSizeListVector vec = (FixedSizeListVector) root.getVector(1);
      Float4Vector f = (Float4Vector) vec.getDataVector();
      int n = to - from;
      id.allocateNew(n);
      vec.allocateNew();
      f.allocateNew(n * DIM);
      for (int i = 0; i < n; i++) {
        id.set(i, from + i);
        vec.setNotNull(i);
        for (int d = 0; d < DIM; d++) {
          f.setSafe(i * DIM + d, (float) ((i % 3) * 10 + r.nextGaussian()));
        }
      }
      f.setValueCount(n * DIM);
      vec.setValueCount(n);
      id.setValueCount(n);
      root.setRowCount(n);
      List<FragmentMetadata> frags = Fragment.write().datasetUri(uri).allocator(allocator)
          .data(root).maxRowsPerFile(Math.max(1, n / 3 + 1)).execute();
      try (Dataset ds = Dataset.open(uri, allocator)) {
        new CommitBuilder(ds).execute(new Transaction.Builder().readVersion(ds.version())
            .operation(Append.builder().fragments(frags).build()).build()).close();
      }
    }
  }

  static final StructType OUT = new StructType()
      .add("partition", DataTypes.IntegerType, false)
      .add("n", DataTypes.LongType, false)
      .add("min_id", DataTypes.LongType, false);

  /** Per call: the context key, the row count, and checks every row's _partition_id. */
  public static final class PerPartition implements BatchUdtf {
    @Override
    public Iterator<Row> process(UdtfContext ctx, Iterator<Row> rows) {
      int pidIndex = ctx.inputSchema().fieldIndex(IvfPartitions.PARTITION_ID);
      long n = 0;
      long min = Long.MAX_VALUE;
      while (rows.hasNext()) {
        Row r = rows.next();
        if (!ctx.partitionKey().equals(r.get(pidIndex))) {
          throw new IllegalStateException("row of partition " + r.get(pidIndex) + " in call "
              + ctx.partitionKey());
        }
        n++;
        min = Math.min(min, r.getLong(r.fieldIndex("id")));
      }
      return List.of(RowFactory.create(ctx.partitionKey(), n, min)).iterator();
    }
  }

  /** {@link PerPartition}, failing on the IVF partitions an outage file names. */
  public static final class FlakyPerPartition implements BatchUdtf {
    @Override
    public Iterator<Row> process(UdtfContext ctx, Iterator<Row> rows) {
      UdtfPartialRetryTest.FlakyUdtf.enter(ctx);
      return new PerPartition().process(ctx, rows);
    }
  }

  private UdtfDefinition definition() {
    return UdtfDefinition.of("per_partition", "1", PerPartition.class, UdtfFixtures.arrow(OUT))
        .withInputColumns(List.of("id", "vec"))
        .withPartitionByIndexedColumn("vec");
  }

  @Test
  void oneCallPerNonEmptyIvfPartitionWithItsExactMembers() {
    long version = UdtfFixtures.latestVersion(source);
    IvfPartitions.IvfIndex index = IvfPartitions.inspect(LanceLocation.of(source, Map.of()), version, "vec");
    String viewUri = dir.resolve("by_ivf.lance").toString();
    UdtfFixtures.createView(viewUri, OUT);

    UdtfRefreshResult r = UdtfFixtures.refresh(spark, UdtfFixtures.wholeTable(source, version),
        new ViewTables("ns.by_ivf", viewUri, Map.of(), source, Map.of()), definition(),
        RefreshOptions.DEFAULTS);

    TreeMap<Integer, Long> expected = new TreeMap<>();
    for (int p = 0; p < index.numPartitions(); p++) {
      if (index.sizes()[p] > 0) {
        expected.put(p, index.sizes()[p]);
      }
    }
    TreeMap<Integer, Long> got = new TreeMap<>();
    for (Row row : spark.read().format("lance").option("path", viewUri).load().collectAsList()) {
      got.put(row.getInt(0), row.getLong(1));
    }
    assertEquals(expected, got);
    assertEquals(expected.size(), r.udtfCalls());
    assertEquals(600, got.values().stream().mapToLong(Long::longValue).sum());
  }

  /**
   * A view left PARTIAL by IVF partitions whose calls failed: the refresh at the same source
   * version calls the function for those partitions only, and then holds what a refresh from
   * scratch holds.
   */
  @Test
  void aPartialViewRetriesOnlyTheIvfPartitionsItSkipped() throws Exception {
    long version = UdtfFixtures.latestVersion(source);
    IvfPartitions.IvfIndex index = IvfPartitions.inspect(LanceLocation.of(source, Map.of()),
        version, "vec");
    List<String> nonEmpty = new java.util.ArrayList<>();
    for (int p = 0; p < index.numPartitions(); p++) {
      if (index.sizes()[p] > 0) {
        nonEmpty.add(Integer.toString(p));
      }
    }
    Path outage = dir.resolve("ivf-outage");
    assertTrue(nonEmpty.size() > 2, "partitions " + nonEmpty);
    String out1 = nonEmpty.get(0);
    String out2 = nonEmpty.get(nonEmpty.size() - 1);
    java.nio.file.Files.writeString(outage, out1 + "\n" + out2);
    Path calls = java.nio.file.Files.createDirectories(dir.resolve("ivf-calls"));
    UdtfDefinition flaky = UdtfDefinition.of("flaky_ivf", "1", FlakyPerPartition.class,
            UdtfFixtures.arrow(OUT))
        .withInputColumns(List.of("id", "vec")).withPartitionByIndexedColumn("vec")
        .withOptions(Map.of("outage", outage.toString(), "calls", calls.toString()))
        .withErrorHandling(new io.lancerest.spark.mv.definition.ErrorHandling(null, List.of(
            io.lancerest.spark.mv.definition.ErrorHandling.Rule.of("outage",
                io.lancerest.spark.mv.definition.ErrorHandling.Action.SKIP)), null, null, null));
    String viewUri = dir.resolve("flaky_ivf.lance").toString();
    UdtfFixtures.createView(viewUri, OUT);
    ViewTables view = new ViewTables("ns.flaky_ivf", viewUri, Map.of(), source, Map.of());

    UdtfRefreshResult first = UdtfFixtures.refresh(spark,
        UdtfFixtures.wholeTable(source, version), view, flaky, RefreshOptions.DEFAULTS);
    assertEquals(List.of(io.lancerest.spark.mv.result.RefreshResult.JobStatus.PARTIAL, 2),
        List.of(first.status(), first.skipped().size()));
    java.nio.file.Files.delete(outage);
    UdtfRefreshResult again = UdtfFixtures.refresh(spark,
        UdtfFixtures.wholeTable(source, version), view, flaky, RefreshOptions.DEFAULTS);

    assertEquals(List.of(io.lancerest.spark.mv.result.RefreshResult.JobStatus.DONE, 2L,
        nonEmpty.size() - 2L, 2L), List.of(again.status(), again.computed(), again.reused(),
        again.udtfCalls()));
    Map<String, Integer> expectedCalls = new TreeMap<>();
    nonEmpty.forEach(p -> expectedCalls.put(p, 1));
    expectedCalls.put(out1, 2);
    expectedCalls.put(out2, 2);
    assertEquals(expectedCalls, UdtfPartialRetryTest.FlakyUdtf.callsByKey(calls));
    String fresh = dir.resolve("fresh_ivf.lance").toString();
    UdtfFixtures.createView(fresh, OUT);
    UdtfFixtures.refresh(spark, UdtfFixtures.wholeTable(source, version),
        new ViewTables("ns.fresh_ivf", fresh, Map.of(), source, Map.of()), definition(),
        RefreshOptions.DEFAULTS);
    assertEquals(UdtfFixtures.rows(spark, fresh, null), UdtfFixtures.rows(spark, viewUri, null));
  }

  @Test
  void withoutAVectorIndexCreateIsRefused() {
    UdtfValidationException e = assertThrows(UdtfValidationException.class,
        () -> IvfPartitions.inspect(LanceLocation.of(source, Map.of()), null, "id"));
    assertEquals("PARTITION BY INDEXED id: source table '" + source + "' has no vector index "
        + "on column 'id'. Create an IVF index first (e.g. CREATE INDEX … USING IVF_FLAT / "
        + "IVF_PQ), then create the view.", e.getMessage());
  }

  @Test
  void hnswSubIndexIsRefusedWithTheReason() {
    Map<String, Object> stats = Map.of("index_type", "IVF_HNSW_SQ", "indices", List.of());
    UdtfValidationException e = assertThrows(UdtfValidationException.class,
        () -> IvfPartitions.describe("vec", "idx", stats));
    assertTrue(e.getMessage().startsWith("PARTITION BY INDEXED vec (index 'idx', IVF_HNSW_SQ): "
        + "an HNSW sub-index"), e.getMessage());
  }

  @Test
  void duplicateCentroidsCannotBeProbedAlone() {
    List<float[]> centroids = List.of(new float[] {1, 2}, new float[] {3, 4},
        new float[] {1, 2});
    UdtfValidationException e = assertThrows(UdtfValidationException.class,
        () -> IvfPartitions.checkSelfProbe("here", "l2", centroids));
    assertTrue(e.getMessage().startsWith("here: centroid 2 is as near to centroid 0 as 0 "
        + "itself under l2 distance"), e.getMessage());
    // Under dot, a longer centroid in the same direction wins the probe for the shorter one.
    assertThrows(UdtfValidationException.class, () -> IvfPartitions.checkSelfProbe("here",
        "dot", List.of(new float[] {1, 0}, new float[] {2, 0})));
    IvfPartitions.checkSelfProbe("here", "cosine",
        List.of(new float[] {1, 0}, new float[] {0, 1}));
  }

  @Test
  void rowsOutsideTheIndexFailTheRefreshAndCommitNothing() {
    String uri = dir.resolve("unindexed.lance").toString();
    createVectors(uri, 300);
    try (Dataset ds = Dataset.open(uri, allocator)) {
      IndexParams p = IndexParams.builder()
          .setVectorIndexParams(VectorIndexParams.ivfFlat(2, DistanceType.L2)).build();
      ds.createIndex(List.of("vec"), IndexType.IVF_FLAT, Optional.of("vec_idx"), p, true);
    }
    append(uri, 300, 330);
    long version = UdtfFixtures.latestVersion(uri);
    String viewUri = dir.resolve("unindexed_view.lance").toString();
    UdtfFixtures.createView(viewUri, OUT);

    UdtfValidationException e = assertThrows(UdtfValidationException.class,
        () -> UdtfFixtures.refresh(spark, UdtfFixtures.wholeTable(uri, version),
            new ViewTables("ns.u", viewUri, Map.of(), uri, Map.of()), definition(),
            RefreshOptions.DEFAULTS));

    assertEquals("PARTITION BY INDEXED vec: 30 rows of source '" + uri + "' at version "
        + version + " are not covered by vector index 'vec_idx', so they belong to no IVF "
        + "partition. Build the index again (ALTER TABLE … CREATE INDEX vec_idx USING … "
        + "replaces it) or extend it with lance-core's Dataset.optimizeIndices, then refresh "
        + "again.",
        e.getMessage());
    assertEquals(1, UdtfFixtures.latestVersion(viewUri));
  }
}
