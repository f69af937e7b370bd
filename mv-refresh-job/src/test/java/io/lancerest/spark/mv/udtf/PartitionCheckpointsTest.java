package io.lancerest.spark.mv.udtf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.commit.FragmentShipping;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.WriteParams;

/** The resume checkpoints of UDTF refreshes: a Lance table inside the view's location. */
class PartitionCheckpointsTest {
  private static final Schema VIEW = new Schema(List.of(
      new Field("n", FieldType.notNullable(new ArrowType.Int(64, true)), null)));

  @TempDir Path dir;

  private static UdtfDefinition def(String version) {
    return UdtfDefinition.of("counts", version, UdtfFixtures.CountingUdtf.class,
        UdtfFixtures.arrow(UdtfFixtures.COUNTS)).withPartitionBy("category");
  }

  private String view() {
    String uri = dir.resolve("v.lance").toString();
    if (!Files.exists(dir.resolve("v.lance"))) {
      try (BufferAllocator a = new RootAllocator()) {
        Dataset.create(a, uri, VIEW, new WriteParams.Builder().build()).close();
      }
    }
    return uri;
  }

  /** Uncommitted fragments of the view holding {@code rows} rows, as a task ships them. */
  private static byte[] fragments(String viewUri, int rows) {
    try (BufferAllocator a = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(VIEW, a)) {
      root.allocateNew();
      BigIntVector n = (BigIntVector) root.getVector("n");
      for (int i = 0; i < rows; i++) {
        n.setSafe(i, i);
      }
      root.setRowCount(rows);
      List<FragmentMetadata> f = FragmentShipping.write(LanceLocation.of(viewUri, Map.of()), a, root, 0);
      return FragmentShipping.toBytes(f);
    }
  }

  private static Map<String, Long> rowsByKey(Map<String, PartitionCheckpoints.Checkpoint> m) {
    Map<String, Long> out = new TreeMap<>();
    m.forEach((k, c) -> out.put(k + "=" + c.keyDisplay(), c.rows()));
    return out;
  }

  @Test
  void finishedPartitionsRoundTripInsideTheViewAndOtherRunsAreDiscarded() {
    String v = view();
    PartitionCheckpoints run = new PartitionCheckpoints(v, Map.of(), def("1"), 7, "src@t");
    assertEquals(Map.of(), run.load(), "a first run finds nothing");
    assertEquals(dir.resolve("v.lance").resolve("_udtf_checkpoints").toString(),
        run.location());

    try (PartitionCheckpoints.Writer w = run.writer()) {
      w.add(new PartitionCheckpoints.Checkpoint("ka", "a", 2, fragments(v, 2)));
      w.add(new PartitionCheckpoints.Checkpoint("knull", null, 3, fragments(v, 3)));
    }
    // Another UDTF version over the same source version: a run key of its own.
    PartitionCheckpoints other = new PartitionCheckpoints(v, Map.of(), def("2"), 7, "src@t");
    try (PartitionCheckpoints.Writer w = other.writer()) {
      w.add(new PartitionCheckpoints.Checkpoint("kb", "b", 1, fragments(v, 1)));
    }

    Map<String, PartitionCheckpoints.Checkpoint> loaded = run.load();
    assertEquals(Map.of("ka=a", 2L, "knull=null", 3L), rowsByKey(loaded));
    assertEquals(2, FragmentShipping.fromBytes(loaded.get("ka").fragments()).get(0)
        .getPhysicalRows());
    // Loading for run 1 deleted run 2's rows: they can never be reused.
    assertEquals(Map.of(), other.load());
    assertEquals(Map.of(), run.load(), "and loading for run 2 deleted run 1's");

    run.clear();
    assertFalse(Files.exists(dir.resolve("v.lance").resolve("_udtf_checkpoints")));
    PartitionCheckpoints.drop(LanceLocation.of(v, Map.of())); // nothing left: no error
    assertTrue(Files.exists(dir.resolve("v.lance").resolve("_versions")), "the view stays");
  }

  @Test
  void aCheckpointWhoseDataFilesAreGoneIsNotReused() throws Exception {
    String v = view();
    PartitionCheckpoints run = new PartitionCheckpoints(v, Map.of(), def("1"), 1, "");
    run.load();
    byte[] kept = fragments(v, 1);
    byte[] lost = fragments(v, 1);
    try (PartitionCheckpoints.Writer w = run.writer()) {
      w.add(new PartitionCheckpoints.Checkpoint("kept", "k", 1, kept));
      w.add(new PartitionCheckpoints.Checkpoint("lost", "l", 1, lost));
    }
    String file = FragmentShipping.fromBytes(lost).get(0).getFiles().get(0).getPath();
    Files.delete(dir.resolve("v.lance").resolve("data").resolve(file));

    assertEquals(List.of("kept"), List.copyOf(run.load().keySet()));
  }

  @Test
  void concurrentTasksAppendWithoutLosingACheckpoint() throws Exception {
    String v = view();
    PartitionCheckpoints run = new PartitionCheckpoints(v, Map.of(), def("1"), 1, "");
    run.load();
    byte[] bytes = fragments(v, 1);
    int tasks = 6;
    int perTask = 4;
    ExecutorService pool = Executors.newFixedThreadPool(tasks);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < tasks; t++) {
        int task = t;
        // Each partition appended on its own, as a task with slow partitions does.
        done.add(pool.submit(() -> {
          for (int p = 0; p < perTask; p++) {
            run.append(List.of(new PartitionCheckpoints.Checkpoint(task + "-" + p,
                task + "-" + p, 1, bytes)));
          }
        }));
      }
      for (Future<?> f : done) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(tasks * perTask, run.load().size());
  }

  @Test
  void aCheckpointTableWhoseFilesAreGoneIsStartedAgainNotAFailure() throws Exception {
    String v = view();
    PartitionCheckpoints run = new PartitionCheckpoints(v, Map.of(), def("1"), 3, "src@t");
    assertEquals(Map.of(), run.load());
    try (PartitionCheckpoints.Writer w = run.writer()) {
      w.add(new PartitionCheckpoints.Checkpoint("ka", "a", 2, fragments(v, 2)));
    }
    assertEquals(Map.of("ka=a", 2L), rowsByKey(run.load()));
    // what a drop racing a task's append can leave: a manifest whose data files are gone
    Path data = Path.of(run.location(), "data");
    try (java.util.stream.Stream<Path> files = Files.list(data)) {
      for (Path f : files.toList()) {
        Files.delete(f);
      }
    }
    assertEquals(Map.of(), run.load(), "unreadable: nothing reused, and no failure");
    try (PartitionCheckpoints.Writer w = run.writer()) {
      w.add(new PartitionCheckpoints.Checkpoint("kb", "b", 1, fragments(v, 1)));
    }
    assertEquals(Map.of("kb=b", 1L), rowsByKey(run.load()), "the table works again");
  }

  @Test
  void checkpointsGoThroughTheViewsStorageOptions() throws Exception {
    // A stand-in S3 endpoint that refuses everything and records who asked.
    List<String> seen = new CopyOnWriteArrayList<>();
    HttpServer s3 = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    s3.createContext("/", ex -> {
      String query = ex.getRequestURI().getQuery();
      seen.add(ex.getRequestMethod() + " " + ex.getRequestURI().getPath()
          + (query == null ? "" : "?" + query) + " "
          + ex.getRequestHeaders().getFirst("Authorization"));
      byte[] body = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>AccessDenied"
          + "</Code><Message>Access Denied</Message></Error>").getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().add("Content-Type", "application/xml");
      ex.sendResponseHeaders(403, body.length);
      ex.getResponseBody().write(body);
      ex.close();
    });
    s3.start();
    try {
      Map<String, String> storage = Map.of(
          "aws_endpoint", "http://127.0.0.1:" + s3.getAddress().getPort(),
          "aws_access_key_id", "AKIDCHECKPOINTS",
          "aws_secret_access_key", "not-to-be-printed-42",
          "aws_region", "us-east-1",
          "allow_http", "true");
      PartitionCheckpoints run = new PartitionCheckpoints("s3://views/ns/v.lance", storage,
          def("1"), 1, "");

      // Checkpoints only save work: unreadable ones mean every partition is computed.
      Map<String, PartitionCheckpoints.Checkpoint> none = assertTimeoutPreemptively(
          Duration.ofSeconds(120), run::load);
      assertEquals(Map.of(), none);
      assertFalse(run.toString().contains("not-to-be-printed-42"), run.toString());
      assertFalse(seen.isEmpty(), "lance-core went to the view's endpoint");
      // Path-style requests for the checkpoint table (objects or a listing of its prefix),
      // signed with the view's key.
      assertTrue(seen.stream().allMatch(r -> r.contains("ns/v.lance/_udtf_checkpoints")
          && r.contains("Credential=AKIDCHECKPOINTS/")), seen.toString());

      // A task's checkpoint that cannot be written costs the rerun, never the partition.
      seen.clear();
      assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
        try (PartitionCheckpoints.Writer w = run.writer()) {
          w.add(new PartitionCheckpoints.Checkpoint("k", "k", 1, new byte[] {1}));
        }
      });
      assertTrue(seen.stream().anyMatch(r -> r.startsWith("PUT /views/ns/v.lance/"
          + "_udtf_checkpoints/") && r.contains("Credential=AKIDCHECKPOINTS/")), seen.toString());
    } finally {
      s3.stop(0);
    }
  }
}
