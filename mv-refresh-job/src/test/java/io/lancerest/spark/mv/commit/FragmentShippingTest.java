package io.lancerest.spark.mv.commit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.SparkFixture;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.FragmentMetadata;

/** Executors write fragments, the driver commits them once. */
class FragmentShippingTest {
  @TempDir Path dir;

  @Test
  void fragmentMetadataSurvivesJavaSerialisation() {
    try (BufferAllocator a = new RootAllocator()) {
      String uri = dir.resolve("t.lance").toString();
      LanceFixtures.create(a, uri);
      List<FragmentMetadata> written = LanceFixtures.fragments(a, uri, 0, 3);
      assertEquals(written, FragmentShipping.fromBytes(FragmentShipping.toBytes(written)));
    }
  }

  @Test
  void sparkTasksWriteFragmentsAndTheDriverCommitsThemInOneVersion() {
    String uri = dir.resolve("view.lance").toString();
    try (BufferAllocator a = new RootAllocator()) {
      LanceFixtures.create(a, uri);
    }
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(SparkFixture.spark().sparkContext());
    // Three tasks; task i writes source ids [10 i, 10 i + 4) and ships its metadata as bytes.
    List<byte[]> shipped = jsc.parallelize(List.of(0, 1, 2), 3).map(i -> {
      try (BufferAllocator a = new RootAllocator();
          VectorSchemaRoot root = LanceFixtures.batch(a, 10L * i, 10L * i + 4)) {
        return FragmentShipping.toBytes(FragmentShipping.write(LanceLocation.of(uri, Map.of()), a, root, 0));
      }
    }).collect();
    List<FragmentMetadata> fragments = new ArrayList<>();
    shipped.forEach(b -> fragments.addAll(FragmentShipping.fromBytes(b)));
    assertEquals(3, fragments.size());

    ViewCommitResult r = ViewCommit.builder(uri, 1).addFragments(fragments).build().commit();
    assertEquals(new ViewCommitResult(1, 2, 0, 12, 3, List.of(), 2), r);
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a)) {
      assertEquals(List.of(0L, 1L, 2L, 3L, 10L, 11L, 12L, 13L, 20L, 21L, 22L, 23L),
          LanceFixtures.rows(ds).keySet().stream().sorted().toList());
      assertEquals(List.of(0, 1, 2),
          ds.getFragments().stream().map(f -> f.getId()).toList());
    }
  }
}
