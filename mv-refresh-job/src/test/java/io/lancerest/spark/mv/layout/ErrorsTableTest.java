package io.lancerest.spark.mv.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.error.MaterializedViewException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.WriteParams;
import org.lance.ipc.ScanOptions;

/** The two-phase errors table shared by chunker and UDTF refreshes (no Spark needed). */
class ErrorsTableTest {
  @TempDir Path dir;

  private static final ErrorsTable.Origin UDTF = new ErrorsTable.Origin("job-1", "ns.v",
      MaterializedViewKind.UDTF, "topk", "2", 7);
  private static final ErrorsTable.Origin CHUNKER = new ErrorsTable.Origin("job-2", "ns.c",
      MaterializedViewKind.CHUNKER, "split", "1", 9);

  /** Rows as text, in table order. */
  private static List<String> rows(String uri) {
    List<String> out = new ArrayList<>();
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a);
        ArrowReader r = ds.newScan(new ScanOptions.Builder().columns(List.of("job_id", "view",
            "kind", "function_name", "function_version", "source_version", "__source_row_id",
            "partition_column", "partition_key", "attempts", "error_class", "error_message"))
            .build()).scanBatches()) {
      while (r.loadNextBatch()) {
        VectorSchemaRoot root = r.getVectorSchemaRoot();
        for (int i = 0; i < root.getRowCount(); i++) {
          StringBuilder sb = new StringBuilder();
          for (var v : root.getFieldVectors()) {
            sb.append(sb.length() == 0 ? "" : "|").append(v.getObject(i));
          }
          out.add(sb.toString());
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return out;
  }

  @Test
  void entriesAppearOnlyOnCommitAndAccumulateOverRefreshes() {
    String uri = ErrorsTable.nextTo(dir.resolve("v.lance").toString());
    assertEquals(dir.resolve("v__errors.lance").toString(), uri);

    ErrorsTable.Staged first = ErrorsTable.stage(LanceLocation.of(uri, Map.of()), UDTF, List.of(
        new ErrorsTable.Entry(null, "category", "NULL", 3, "java.io.IOException", "disk")));
    assertEquals(List.of(), rows(uri), "staged, not committed: nothing visible");
    assertTrue(first.commit());
    ErrorsTable.stage(LanceLocation.of(uri, Map.of()), CHUNKER, List.of(
        new ErrorsTable.Entry(42L, null, null, 1, "java.lang.IllegalStateException", "bad")))
        .commit();

    assertEquals(List.of(
        "job-1|ns.v|udtf|topk|2|7|null|category|NULL|3|java.io.IOException|disk",
        "job-2|ns.c|chunker|split|1|9|42|null|null|1|java.lang.IllegalStateException|bad"),
        rows(uri));
  }

  @Test
  void committingAStageAgainDoesNotRecordItTwice() {
    String uri = dir.resolve("twice__errors.lance").toString();
    ErrorsTable.Staged staged = ErrorsTable.stage(LanceLocation.of(uri, Map.of()), UDTF, List.of(
        new ErrorsTable.Entry(null, "category", "b", 2, "java.io.IOException", "disk")));
    // A retry after an append whose answer was lost must find the entries already there.
    assertTrue(staged.commit());
    assertTrue(staged.commit());

    assertEquals(List.of("job-1|ns.v|udtf|topk|2|7|null|category|b|2|java.io.IOException|disk"),
        rows(uri));
  }

  @Test
  void anAbandonedStageRecordsNothing() {
    String uri = dir.resolve("a__errors.lance").toString();
    ErrorsTable.Staged staged = ErrorsTable.stage(LanceLocation.of(uri, Map.of()), UDTF, List.of(
        new ErrorsTable.Entry(null, "k", "1", 1, "E", "m")));
    staged.abandon("the view commit conflicted");
    assertEquals(List.of(), rows(uri));
  }

  @Test
  void noEntriesTouchNothing() {
    String uri = dir.resolve("n__errors.lance").toString();
    ErrorsTable.Staged staged = ErrorsTable.stage(LanceLocation.of(uri, Map.of()), UDTF, List.of());
    assertNull(staged.uri());
    assertTrue(staged.commit());
    assertTrue(!dir.resolve("n__errors.lance").toFile().exists());
  }

  @Test
  void aTableWithOtherColumnsIsRefusedBeforeAnythingIsWritten() {
    String uri = dir.resolve("old__errors.lance").toString();
    Schema old = new Schema(List.of(
        new Field("job_id", FieldType.nullable(ArrowType.Utf8.INSTANCE), null),
        new Field("chunker", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));
    try (BufferAllocator a = new RootAllocator()) {
      Dataset.create(a, uri, old, new WriteParams.Builder().build()).close();
    }
    MaterializedViewException e = assertThrows(MaterializedViewException.class,
        () -> ErrorsTable.stage(LanceLocation.of(uri, Map.of()), CHUNKER, List.of(
            new ErrorsTable.Entry(1L, null, null, 1, "E", "m"))));
    assertEquals("Errors table '" + uri + "' of view 'ns.c' has columns [job_id, chunker], "
        + "expected [job_id, view, kind, function_name, function_version, source_version, "
        + "__source_row_id, partition_column, partition_key, attempts, error_class, "
        + "error_message, recorded_at_ms] (it was written by an older release?); drop or move "
        + "it, the next refresh recreates it", e.getMessage());
  }
}
