package io.lancerest.spark.mv.function;

import io.lancerest.spark.mv.error.InvalidOptionException;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructType;

/**
 * A chunker, batch form ({@code batch = true}): receives a batch of parents and returns their
 * children, for functions that are cheaper per batch (a model call, a remote service).
 *
 * <p>Each input row has {@code __source_row_id} (a {@code Long}) as field 0, then the input
 * columns. Each output row has the {@code __source_row_id} of its parent as field 0, then the
 * output columns in the declared order. Children of one parent keep the order in which they are
 * returned ({@code __child_index}); children of different parents may interleave. A child whose
 * {@code __source_row_id} is not in the batch fails the refresh with a {@link
 * ChunkerOutputException}.
 *
 * <p>A batch is at most one work item ({@code source_task_size} parents). When a batch fails and
 * {@code error_handling} skips with {@code fault_isolation = skip_rows}, the engine re-runs its
 * parents one by one so that only the failing parents are skipped.
 */
public interface BatchChunker {
  /**
   * As {@link Chunker#validate}: {@code inputSchema} holds the input columns only, without the
   * {@code __source_row_id} that the batch rows carry first.
   *
   * @throws InvalidOptionException for an option the chunker cannot run with
   */
  default void validate(Map<String, String> options, StructType inputSchema) {}

  default void open(ChunkerContext context) {}

  Iterator<Row> chunkBatch(List<Row> parents);

  default void close() {}

  /** As {@link Chunker#outputSchema}. */
  default StructType outputSchema(Map<String, String> options, StructType inputSchema) {
    return null;
  }
}
