package io.lancerest.testing;

import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;

/** Hands one prepared batch to lance-core as a stream (tests that write a dataset directly). */
public final class OneBatch extends ArrowReader {
  private final VectorSchemaRoot batch;
  private boolean done;

  public OneBatch(BufferAllocator a, VectorSchemaRoot batch) {
    super(a);
    this.batch = batch;
  }

  @Override
  public boolean loadNextBatch() throws IOException {
    if (done) {
      return false;
    }
    done = true;
    try (var rb = new VectorUnloader(batch).getRecordBatch()) {
      new VectorLoader(getVectorSchemaRoot()).load(rb);
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
