package io.lancerest.client.arrow;

import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Record batches decoded from an IPC answer. The caller owns the memory and must close this,
 * which closes every batch.
 */
public final class ArrowBatches implements AutoCloseable {
  private final Schema schema;
  private final List<VectorSchemaRoot> batches;

  ArrowBatches(Schema schema, List<VectorSchemaRoot> batches) {
    this.schema = schema;
    this.batches = List.copyOf(batches);
  }

  public Schema schema() {
    return schema;
  }

  /** The batches in the server's order. */
  public List<VectorSchemaRoot> batches() {
    return batches;
  }

  public long rowCount() {
    return batches.stream().mapToLong(VectorSchemaRoot::getRowCount).sum();
  }

  /** Values of one column across all batches, as Arrow's Java objects (e.g. {@code Text}). */
  public List<Object> column(String name) {
    List<Object> out = new java.util.ArrayList<>();
    for (VectorSchemaRoot b : batches) {
      var v = b.getVector(name);
      if (v == null) {
        throw new IllegalArgumentException(
            "No column '" + name + "' in the result; it has " + schema.getFields());
      }
      for (int i = 0; i < b.getRowCount(); i++) {
        out.add(v.getObject(i));
      }
    }
    return out;
  }

  @Override
  public void close() {
    batches.forEach(VectorSchemaRoot::close);
  }
}
