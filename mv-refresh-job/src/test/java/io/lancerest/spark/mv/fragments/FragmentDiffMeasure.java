package io.lancerest.spark.mv.fragments;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.ReadOptions;
import org.lance.WriteParams;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * Micro-measurement of the fragment diff of a 1M-row fragment that gained 5,000 deletions (the
 * query-view benchmark's UPDATE round); not a test. Run from the repository root:
 * <pre>
 * mvn -o -q -pl mv-refresh-job test-compile dependency:build-classpath -Dmdep.outputFile=/tmp/cp
 * java -cp mv-refresh-job/target/test-classes:mv-refresh-job/target/classes:$(cat /tmp/cp) \
 *   io.lancerest.spark.mv.fragments.FragmentDiffMeasure [rows=1000000] [rounds=15]
 * </pre>
 * Prints the median of each way to get the deleted row ids, after warm-up rounds.
 */
public final class FragmentDiffMeasure {
  private FragmentDiffMeasure() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 15;
    Path dir = Files.createTempDirectory("fragdiff");
    String uri = dir.resolve("t.lance").toString();
    Schema schema = new Schema(List.of(
        new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null)));
    try (BufferAllocator a = new RootAllocator()) {
      try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, a)) {
        BigIntVector id = (BigIntVector) root.getVector(0);
        id.allocateNew(rows);
        for (int i = 0; i < rows; i++) {
          id.set(i, i);
        }
        root.setRowCount(rows);
        WriteParams p = new WriteParams.Builder().withEnableStableRowIds(true)
            .withMaxRowsPerFile(rows).build();
        Dataset.create(a, uri, schema, p).close();
        var frags = org.lance.Fragment.create(uri, a, root, p);
        try (Dataset ds = Dataset.open(uri, a);
            org.lance.Transaction t = new org.lance.Transaction.Builder()
                .readVersion(ds.version())
                .operation(org.lance.operation.Append.builder().fragments(frags).build())
                .build()) {
          new org.lance.CommitBuilder(ds).execute(t).close();
        }
      }
      long[] versions = new long[3];
      try (Dataset ds = Dataset.open(uri, a)) {
        versions[0] = ds.version();
        // 5,000 scattered deletions, like 5,000 updated rows; then 5,000 more
        ds.delete("id % 200 = 7");
      }
      try (Dataset ds = Dataset.open(uri, a)) {
        versions[1] = ds.version();
        ds.delete("id % 200 = 8");
      }
      try (Dataset ds = Dataset.open(uri, a)) {
        versions[2] = ds.version();
      }
      System.out.printf("rows %d, load %s%n", rows,
          Files.readString(Path.of("/proc/loadavg")).trim());
      measure(a, uri, versions[0], versions[1], rounds, "first deletions (none before)");
      measure(a, uri, versions[1], versions[2], rounds, "more deletions");
      try (Dataset ds = Dataset.open(uri, a)) {
        lookup(ds, rounds);
      }
      System.out.printf("load after: %s%n", Files.readString(Path.of("/proc/loadavg")).trim());
    }
  }

  /** The view lookup's scan shape: one BIGINT column, a range filter, row addresses. */
  private static void lookup(Dataset ds, int rounds) throws Exception {
    long[] batches = {0, 1 << 16, 1 << 20};
    long[][] times = new long[batches.length][rounds];
    long expect = -1;
    for (int r = 0; r < rounds + 3; r++) {
      for (int w = 0; w < batches.length; w++) {
        long s = System.nanoTime();
        ScanOptions.Builder b = new ScanOptions.Builder().columns(List.of("id"))
            .filter("(id >= 20000 AND id <= 24999)").withRowAddress(true);
        if (batches[w] > 0) {
          b.batchSize(batches[w]);
        }
        long n = 0;
        try (LanceScanner sc = ds.newScan(b.build()); ArrowReader rd = sc.scanBatches()) {
          while (rd.loadNextBatch()) {
            n += rd.getVectorSchemaRoot().getRowCount();
          }
        }
        long e = System.nanoTime() - s;
        if (expect < 0) {
          expect = n;
        } else if (n != expect) {
          throw new IllegalStateException("lookup gave " + n + " rows, expected " + expect);
        }
        if (r >= 3) {
          times[w][r - 3] = e;
        }
      }
    }
    System.out.printf("view lookup scan of the 1M-row fragment (%d rows match):%n", expect);
    for (int w = 0; w < batches.length; w++) {
      java.util.Arrays.sort(times[w]);
      System.out.printf("  batch %-8s median %.1f ms, min %.1f ms%n",
          batches[w] == 0 ? "default" : String.valueOf(batches[w]),
          times[w][rounds / 2] / 1e6, times[w][0] / 1e6);
    }
  }

  private static void measure(BufferAllocator a, String uri, long from, long to, int rounds,
      String what) throws Exception {
    try (Dataset t = open(a, uri, from); Dataset n = open(a, uri, to)) {
      List<Integer> f = List.of(t.getFragments().get(0).getId());
      Roaring64NavigableMap expect = sequential(t, n, f, 8192);
      FragmentDiff diff = FragmentDiff.between(FragmentDiff.metadata(t.getFragments()),
          FragmentDiff.metadata(n.getFragments()));
      if (!diff.deletionsChanged.equals(f)) {
        throw new IllegalStateException("unexpected diff " + diff);
      }
      String[] names = {"before: 2 scans, 8K batches", "2 scans, 1M batches",
          "FragmentDiff.departed", "departed, older side cached"};
      FragmentMetadata older = t.getFragments().get(0).metadata();
      long[][] times = new long[names.length][rounds];
      for (int r = 0; r < rounds + 3; r++) {
        for (int w = 0; w < names.length; w++) {
          LiveRowIds cache = new LiveRowIds();
          if (w == 3) {
            // what the previous refresh (whose target was this one's watermark) left behind
            cache.scanned(t.uri(), older, FragmentDiff.rowIds(t, f));
          }
          long s = System.nanoTime();
          Roaring64NavigableMap got = w == 0 ? sequential(t, n, f, 8192)
              : w == 1 ? sequential(t, n, f, 1 << 20) : diff.departed(t, n, cache, DeletionVectors.DIRECT).ids();
          long e = System.nanoTime() - s;
          if (!got.equals(expect)) {
            throw new IllegalStateException(names[w] + " gave another result");
          }
          if (r >= 3) {
            times[w][r - 3] = e;
          }
        }
      }
      System.out.printf("%s: %d ids left%n", what, expect.getLongCardinality());
      for (int w = 0; w < names.length; w++) {
        java.util.Arrays.sort(times[w]);
        System.out.printf("  %-30s median %.1f ms, min %.1f ms%n", names[w],
            times[w][rounds / 2] / 1e6, times[w][0] / 1e6);
      }
    }
  }

  private static Dataset open(BufferAllocator a, String uri, Long version) {
    ReadOptions.Builder b = new ReadOptions.Builder().setStorageOptions(Map.of());
    if (version != null) {
      b.setVersion(version);
    }
    return Dataset.open(a, uri, b.build());
  }

  private static Roaring64NavigableMap sequential(Dataset t, Dataset n, List<Integer> f,
      long batch) throws Exception {
    Roaring64NavigableMap before = ids(t, f, batch);
    Roaring64NavigableMap after = ids(n, f, batch);
    before.andNot(after);
    return before;
  }

  private static Roaring64NavigableMap ids(Dataset ds, List<Integer> f, long batch)
      throws Exception {
    Roaring64NavigableMap ids = new Roaring64NavigableMap();
    try (LanceScanner s = ds.newScan(new ScanOptions.Builder().fragmentIds(f)
            .columns(List.of()).withRowId(true).batchSize(batch).build());
        ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        VectorSchemaRoot root = r.getVectorSchemaRoot();
        FragmentDiff.addLongs(root.getVector("_rowid"), root.getRowCount(), ids);
      }
    }
    return ids;
  }
}
