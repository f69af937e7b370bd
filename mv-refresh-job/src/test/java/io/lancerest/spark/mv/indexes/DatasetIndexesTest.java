package io.lancerest.spark.mv.indexes;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.Transaction;
import org.lance.WriteParams;
import org.lance.index.DistanceType;
import org.lance.index.Index;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.OptimizeOptions;
import org.lance.index.scalar.ScalarIndexParams;
import org.lance.index.vector.VectorIndexParams;
import org.lance.operation.Append;
import org.lance.operation.CreateIndex;
import org.lance.operation.Overwrite;

/**
 * A dataset's indexes read with lance-core alone: one summary per index whatever its kind (btree,
 * bitmap, full text, IVF), its segments counted, rows appended since it was built counted as not
 * indexed, deleted rows counted nowhere.
 */
class DatasetIndexesTest {
  private static final Schema SCHEMA = new Schema(List.of(
      Field.nullable("id", new ArrowType.Int(64, true)),
      new Field("vec", FieldType.nullable(new ArrowType.FixedSizeList(4)), List.of(
          Field.nullable("item", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)))),
      Field.nullable("text", ArrowType.Utf8.INSTANCE),
      Field.nullable("cat", ArrowType.Utf8.INSTANCE)));
  /** Every tokenizer field, as lance-core's inverted index parameters need them. */
  private static final String FTS = "{\"base_tokenizer\":\"simple\",\"language\":\"English\","
      + "\"max_token_length\":40,\"lower_case\":true,\"stem\":false,\"remove_stop_words\":false,"
      + "\"ascii_folding\":false,\"with_position\":false}";

  @TempDir Path dir;

  /** Rows {@code [from, to)} appended in fragments of at most 256 rows. */
  private static void append(BufferAllocator a, String uri, int from, int to) {
    List<FragmentMetadata> frags = write(a, uri, from, to);
    try (Dataset ds = Dataset.open(uri, a)) {
      new CommitBuilder(ds).execute(new Transaction.Builder().readVersion(ds.version())
          .operation(Append.builder().fragments(frags).build()).build()).close();
    }
  }

  /** Rows {@code [from, to)} written as fragments of at most 256 rows, not committed. */
  private static List<FragmentMetadata> write(BufferAllocator a, String uri, int from, int to) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, a)) {
      root.allocateNew();
      BigIntVector id = (BigIntVector) root.getVector("id");
      FixedSizeListVector vec = (FixedSizeListVector) root.getVector("vec");
      Float4Vector items = (Float4Vector) vec.getDataVector();
      VarCharVector text = (VarCharVector) root.getVector("text");
      VarCharVector cat = (VarCharVector) root.getVector("cat");
      int n = to - from;
      for (int i = 0; i < n; i++) {
        long v = from + i;
        id.setSafe(i, v);
        vec.setNotNull(i);
        for (int d = 0; d < 4; d++) {
          items.setSafe(i * 4 + d, (float) Math.sin(v * (d + 1) * 0.01));
        }
        text.setSafe(i, ("word" + (v % 17) + " doc" + v).getBytes(StandardCharsets.UTF_8));
        cat.setSafe(i, ("c" + (v % 3)).getBytes(StandardCharsets.UTF_8));
      }
      root.setRowCount(n);
      return Fragment.write().datasetUri(uri).allocator(a).data(root).maxRowsPerFile(256)
          .execute();
    }
  }

  /** {@code vec_idx} (ivf_flat, 2 partitions) and {@code id_idx} (btree). */
  private static void vectorAndBtree(Dataset ds) {
    ds.createIndex(List.of("vec"), IndexType.IVF_FLAT, Optional.of("vec_idx"), IndexParams
        .builder().setVectorIndexParams(VectorIndexParams.ivfFlat(2, DistanceType.L2)).build(),
        true);
    ds.createIndex(List.of("id"), IndexType.BTREE, Optional.of("id_idx"), IndexParams.builder()
        .setScalarIndexParams(ScalarIndexParams.create("btree")).build(), true);
  }

  private static List<IndexSummary> list(BufferAllocator a, String uri) {
    try (Dataset ds = Dataset.open(uri, a)) {
      return DatasetIndexes.list(ds);
    }
  }

  private static IndexSummary summary(String name, String type, String column,
      long fragmentsIndexed, long rowsIndexed, long fragmentsUnindexed, long rowsUnindexed,
      int segments) {
    return new IndexSummary(name, type, List.of(column), fragmentsIndexed, rowsIndexed,
        fragmentsUnindexed, rowsUnindexed, segments);
  }

  @Test
  void everyKindOfIndexIsCountedWithItsSegmentsAndTheRowsItDoesNotCoverYet() {
    String uri = dir.resolve("t.lance").toString();
    try (BufferAllocator a = new RootAllocator()) {
      Dataset.create(a, uri, SCHEMA, new WriteParams.Builder().withEnableStableRowIds(true)
          .build()).close();
      append(a, uri, 0, 512); // fragments 0 and 1
      assertEquals(List.of(), list(a, uri));

      try (Dataset ds = Dataset.open(uri, a)) {
        vectorAndBtree(ds);
        ds.createIndex(List.of("cat"), IndexType.BITMAP, Optional.of("cat_idx"), IndexParams
            .builder().setScalarIndexParams(ScalarIndexParams.create("bitmap")).build(), true);
        ds.createIndex(List.of("text"), IndexType.INVERTED, Optional.of("text_idx"), IndexParams
            .builder().setScalarIndexParams(ScalarIndexParams.create("inverted", FTS)).build(),
            true);
      }
      assertEquals(List.of(summary("vec_idx", "vector", "vec", 2, 512, 0, 0, 1),
          summary("id_idx", "btree", "id", 2, 512, 0, 0, 1),
          summary("cat_idx", "bitmap", "cat", 2, 512, 0, 0, 1),
          summary("text_idx", "inverted", "text", 2, 512, 0, 0, 1)), list(a, uri));

      append(a, uri, 1000, 1100); // fragment 2, in no index
      assertEquals(List.of(summary("vec_idx", "vector", "vec", 2, 512, 1, 100, 1),
          summary("id_idx", "btree", "id", 2, 512, 1, 100, 1),
          summary("cat_idx", "bitmap", "cat", 2, 512, 1, 100, 1),
          summary("text_idx", "inverted", "text", 2, 512, 1, 100, 1)), list(a, uri));

      // fragment 2 indexed as a delta segment of the vector index, its centroids kept
      try (Dataset ds = Dataset.open(uri, a)) {
        ds.optimizeIndices(OptimizeOptions.builder().indexNames(List.of("vec_idx"))
            .numIndicesToMerge(0).build());
      }
      append(a, uri, 2000, 2050); // fragment 3, in no index
      try (Dataset ds = Dataset.open(uri, a)) {
        ds.delete("id < 10");
      }
      assertEquals(List.of(summary("vec_idx", "vector", "vec", 3, 602, 1, 50, 2),
          summary("id_idx", "btree", "id", 2, 502, 2, 150, 1),
          summary("cat_idx", "bitmap", "cat", 2, 502, 2, 150, 1),
          summary("text_idx", "inverted", "text", 2, 502, 2, 150, 1)), list(a, uri));
      assertEquals("vector on vec: 602 rows indexed, 50 not indexed, 2 segments",
          list(a, uri).get(0).summary());
      assertEquals("btree on id: 502 rows indexed, 150 not indexed, 1 segment",
          list(a, uri).get(1).summary());
    }
  }

  /**
   * A view commit that keeps its indexes: an Overwrite (which drops every index) followed by the
   * indexes read before it, registered again. Their bitmaps still name the fragments the
   * Overwrite removed; those are not counted, and a new fragment is counted as not indexed until
   * a delta segment covers it. Rows deleted from a kept fragment are counted nowhere.
   */
  @Test
  void fragmentsAnOverwriteRemovedAreNotCountedAndItsNewOnesAreUnindexed() {
    String uri = dir.resolve("v.lance").toString();
    try (BufferAllocator a = new RootAllocator()) {
      Dataset.create(a, uri, SCHEMA, new WriteParams.Builder().withEnableStableRowIds(true)
          .build()).close();
      append(a, uri, 0, 1024); // fragments 0 to 3
      try (Dataset ds = Dataset.open(uri, a)) {
        vectorAndBtree(ds);
      }
      // lance-core 4.0.0 keeps 128 bytes of Arrow C-schema memory of an Overwrite (as
      // ViewCommit measured): the commit gets an allocator of its own, whose close reports it.
      RootAllocator commitAllocator = new RootAllocator();
      try (Dataset ds = Dataset.open(uri, commitAllocator)) {
        List<Index> before = ds.getIndexes();
        List<Fragment> frags = ds.getFragments();
        List<FragmentMetadata> kept = new ArrayList<>();
        kept.add(frags.get(0).deleteRows(IntStream.range(0, 10).boxed().toList()));
        kept.add(frags.get(2).metadata());
        for (FragmentMetadata f : write(a, uri, 5000, 5100)) { // id 100: above every bitmap's
          kept.add(new FragmentMetadata(100 + f.getId(), f.getFiles(), f.getPhysicalRows(),
              f.getDeletionFile(), f.getRowIdMeta()));
        }
        try (Dataset overwritten = new CommitBuilder(ds).execute(new Transaction.Builder()
            .readVersion(ds.version()).operation(Overwrite.builder().fragments(kept)
                .schema(ds.getSchema()).build()).build())) {
          assertEquals(List.of(), overwritten.getIndexes());
          new CommitBuilder(overwritten).execute(new Transaction.Builder()
              .readVersion(overwritten.version()).operation(CreateIndex.builder()
                  .withNewIndices(before).build()).build()).close();
        }
      }
      try {
        commitAllocator.close();
      } catch (IllegalStateException leakedByLanceCore) {
        // the memory above; nothing of the indexes depends on it
      }
      try (Dataset ds = Dataset.open(uri, a)) {
        assertEquals(List.of(0, 1, 2, 3), ds.getIndexes().get(0).fragments().orElseThrow(),
            "the bitmaps still name the removed fragments 1 and 3");
      }
      assertEquals(List.of(summary("vec_idx", "vector", "vec", 2, 502, 1, 100, 1),
          summary("id_idx", "btree", "id", 2, 502, 1, 100, 1)), list(a, uri));

      try (Dataset ds = Dataset.open(uri, a)) {
        ds.optimizeIndices(OptimizeOptions.builder().indexNames(List.of("vec_idx"))
            .numIndicesToMerge(0).build());
      }
      assertEquals(List.of(summary("vec_idx", "vector", "vec", 3, 602, 0, 0, 2),
          summary("id_idx", "btree", "id", 2, 502, 1, 100, 1)), list(a, uri));
    }
  }
}
