package io.lancerest.spark.mv.chunker;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.Transaction;
import org.lance.WriteParams;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;
import org.lance.merge.MergeInsertParams;
import org.lance.operation.Append;

/**
 * Local source tables for chunker tests, written with lance-core: {@code id int64, doc string,
 * tag string}, stable row ids on. Every call commits one version.
 */
final class SourceTables {
  static final Schema SCHEMA = new Schema(List.of(
      new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
      new Field("doc", FieldType.nullable(ArrowType.Utf8.INSTANCE), null),
      new Field("tag", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));

  /** One source row. */
  record Doc(long id, String doc, String tag) {}

  private SourceTables() {}

  static void create(String uri) {
    try (BufferAllocator a = new RootAllocator()) {
      Dataset.create(a, uri, SCHEMA, new WriteParams.Builder().withEnableStableRowIds(true)
          .build()).close();
    }
  }

  static VectorSchemaRoot batch(BufferAllocator a, List<Doc> docs) {
    VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, a);
    BigIntVector id = (BigIntVector) root.getVector(0);
    VarCharVector doc = (VarCharVector) root.getVector(1);
    VarCharVector tag = (VarCharVector) root.getVector(2);
    root.allocateNew();
    for (int i = 0; i < docs.size(); i++) {
      Doc d = docs.get(i);
      id.setSafe(i, d.id());
      if (d.doc() == null) {
        doc.setNull(i);
      } else {
        doc.setSafe(i, d.doc().getBytes(StandardCharsets.UTF_8));
      }
      if (d.tag() == null) {
        tag.setNull(i);
      } else {
        tag.setSafe(i, d.tag().getBytes(StandardCharsets.UTF_8));
      }
    }
    root.setRowCount(docs.size());
    return root;
  }

  /** Appends the docs in one commit, at most {@code rowsPerFragment} rows per fragment. */
  static long append(String uri, List<Doc> docs, int rowsPerFragment) {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a);
        VectorSchemaRoot root = batch(a, docs)) {
      List<FragmentMetadata> f = Fragment.write().datasetUri(uri).allocator(a).data(root)
          .maxRowsPerFile(rowsPerFragment).execute();
      Transaction t = new Transaction.Builder().readVersion(ds.version())
          .operation(Append.builder().fragments(f).build()).build();
      try (Dataset out = new CommitBuilder(ds).execute(t)) {
        return out.version();
      }
    }
  }

  /** Updates the docs with these ids in place (merge insert on id: stable row ids kept). */
  static long update(String uri, List<Doc> docs) {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a);
        VectorSchemaRoot root = batch(a, docs);
        ArrowReader reader = new SingleBatchReader(a, root);
        ArrowArrayStream stream = ArrowArrayStream.allocateNew(a)) {
      Data.exportArrayStream(a, reader, stream);
      MergeInsertParams p = new MergeInsertParams(List.of("id")).withMatchedUpdateAll()
          .withNotMatched(MergeInsertParams.WhenNotMatched.DoNothing);
      try (Dataset out = ds.mergeInsert(p, stream).dataset()) {
        return out.version();
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static long delete(String uri, String predicate) {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a)) {
      ds.delete(predicate);
      return ds.latestVersion();
    }
  }

  /** {id → _rowid} at the latest version. */
  static Map<Long, Long> rowIds(String uri) {
    Map<Long, Long> out = new TreeMap<>();
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a);
        LanceScanner s = ds.newScan(new ScanOptions.Builder().columns(List.of("id"))
            .withRowId(true).build());
        ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        VectorSchemaRoot root = r.getVectorSchemaRoot();
        FieldVector rid = root.getVector("_rowid");
        BigIntVector id = (BigIntVector) root.getVector("id");
        for (int i = 0; i < root.getRowCount(); i++) {
          out.put(id.get(i), ((Number) rid.getObject(i)).longValue());
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return out;
  }

  static List<Doc> docs(long from, long to, java.util.function.LongFunction<String> text) {
    List<Doc> out = new ArrayList<>();
    for (long i = from; i < to; i++) {
      out.add(new Doc(i, text.apply(i), i % 2 == 0 ? "even" : "odd"));
    }
    return out;
  }

  /** Hands one prepared batch to lance-core as a stream. */
  static final class SingleBatchReader extends ArrowReader {
    private final VectorSchemaRoot batch;
    private boolean done;

    SingleBatchReader(BufferAllocator a, VectorSchemaRoot batch) {
      super(a);
      this.batch = batch;
    }

    @Override
    public boolean loadNextBatch() throws java.io.IOException {
      if (done) {
        return false;
      }
      done = true;
      VectorSchemaRoot root = getVectorSchemaRoot();
      try (var rb = new org.apache.arrow.vector.VectorUnloader(batch).getRecordBatch()) {
        new org.apache.arrow.vector.VectorLoader(root).load(rb);
      }
      return true;
    }

    @Override
    public long bytesRead() {
      return 0;
    }

    @Override
    protected void closeReadSource() {}

    @Override
    protected Schema readSchema() {
      return batch.getSchema();
    }
  }
}
