package io.lancerest.spark.mv.maintenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.commit.ViewCommitConflictException;
import io.lancerest.spark.mv.layout.GenevaLayout;
import io.lancerest.spark.mv.rowindex.FragmentSourceRanges;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.FragmentOperation;
import org.lance.ReadOptions;
import org.lance.WriteParams;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

/**
 * The view's own compaction on a lance-core dataset shaped like a query view ({@code
 * __source_row_id}, stable row ids, small fragments), without Spark: rows kept, each new
 * fragment with its range, and a commit that landed meanwhile either rebased on (it left the
 * compacted fragments as they were) or refused (it deleted rows of them).
 */
class ViewCompactionTest {
  private BufferAllocator allocator;
  private String uri;

  @BeforeEach
  void create() throws Exception {
    allocator = new RootAllocator();
    Path dir = Files.createTempDirectory("view-compaction");
    uri = dir.resolve("v.lance").toString();
    Schema schema = new Schema(List.of(
        Field.nullable(GenevaLayout.SOURCE_ROW_ID, new ArrowType.Int(64, true)),
        Field.nullable("x", new ArrowType.Int(64, true))),
        Map.of(FragmentSourceRanges.KEY, ""));
    Dataset.create(allocator, uri, schema, new WriteParams.Builder()
        .withEnableStableRowIds(true).build()).close();
    for (int f = 0; f < 5; f++) {
      try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
        BigIntVector id = (BigIntVector) root.getVector(0);
        BigIntVector x = (BigIntVector) root.getVector(1);
        id.allocateNew(10);
        x.allocateNew(10);
        for (int i = 0; i < 10; i++) {
          id.set(i, f * 100 + i);
          x.set(i, f * 100 + i + 7);
        }
        root.setRowCount(10);
        List<FragmentMetadata> written = Fragment.write().datasetUri(uri).allocator(allocator)
            .data(root).execute();
        try (Dataset ds = open()) {
          new FragmentOperation.Append(written).commit(allocator, uri,
              Optional.of(ds.version()), Map.of()).close();
        }
      }
    }
  }

  @AfterEach
  void close() {
    allocator.close();
  }

  private Dataset open() {
    return Dataset.open(allocator, uri, new ReadOptions.Builder().build());
  }

  private TreeSet<String> rows() throws Exception {
    TreeSet<String> out = new TreeSet<>();
    try (Dataset ds = open(); LanceScanner s = ds.newScan(new ScanOptions.Builder().build());
        ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        VectorSchemaRoot root = r.getVectorSchemaRoot();
        for (int i = 0; i < root.getRowCount(); i++) {
          out.add(root.getVector(0).getObject(i) + "|" + root.getVector(1).getObject(i));
        }
      }
    }
    return out;
  }

  private static List<List<Integer>> groups(Dataset ds) {
    List<Integer> ids = new ArrayList<>();
    ds.getFragments().forEach(f -> ids.add(f.getId()));
    return List.of(ids.subList(1, 4)); // the middle three
  }

  @Test
  void groupsBecomeOneFragmentEachWithTheirRangeAndTheRowsStay() throws Exception {
    TreeSet<String> before = rows();
    try (Dataset ds = open()) {
      ViewCompaction.run(ds, LanceLocation.of(uri, Map.of()), allocator, groups(ds));
    }
    assertEquals(before, rows());
    try (Dataset ds = open()) {
      assertEquals(3, ds.getFragments().size());
      Map<Integer, FragmentSourceRanges.Entry> ranges = FragmentSourceRanges.parse(
          ds.getSchema().getCustomMetadata().get(FragmentSourceRanges.KEY));
      Fragment merged = ds.getFragments().get(ds.getFragments().size() - 1);
      assertEquals(30, merged.metadata().getNumRows());
      FragmentSourceRanges.Entry e = ranges.get(merged.getId());
      assertEquals(100, e.min(), ranges.toString());
      assertEquals(309, e.max(), ranges.toString());
    }
  }

  @Test
  void aCommitThatLeftTheGroupsAloneIsRebasedOn() throws Exception {
    TreeSet<String> before = rows();
    try (Dataset stale = open()) {
      try (Dataset now = open()) {
        now.updateConfig(Map.of("some.key", "set meanwhile")); // another commit lands
      }
      ViewCompaction.run(stale, LanceLocation.of(uri, Map.of()), allocator, groups(stale));
    }
    assertEquals(before, rows());
    try (Dataset ds = open()) {
      assertEquals(3, ds.getFragments().size());
      assertEquals("set meanwhile", ds.getConfig().get("some.key"),
          "the other commit's change is kept");
    }
  }

  @Test
  void aCommitThatDeletedRowsOfAGroupMakesTheCompactionGiveUp() throws Exception {
    try (Dataset stale = open()) {
      try (Dataset now = open()) {
        now.delete(GenevaLayout.SOURCE_ROW_ID + " = 205"); // a row of the middle group
      }
      TreeSet<String> expected = rows();
      ViewCommitConflictException e = assertThrows(ViewCommitConflictException.class,
          () -> ViewCompaction.run(stale, LanceLocation.of(uri, Map.of()), allocator, groups(stale)));
      assertTrue(e.getMessage().contains("was modified by another commit"), e.getMessage());
      assertEquals(expected, rows(), "the deleted row did not come back");
      assertTrue(!expected.contains("205|212"));
    }
  }
}
