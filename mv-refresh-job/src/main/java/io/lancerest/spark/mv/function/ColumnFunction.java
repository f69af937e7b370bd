package io.lancerest.spark.mv.function;

import io.lancerest.spark.mv.error.InvalidOptionException;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * The function of a computed column: one value per row (1:1), called on a batch of rows so that
 * a function with a per-call cost (a model, a remote call) pays it once per batch.
 *
 * <p>The engine creates an instance with the public no-argument constructor and calls {@link
 * #open} once before the first batch and {@link #close} when it is done with the instance. How
 * long an instance lives is the engine's choice (at least one backfill task; a function whose
 * {@link #shareable} is true may be kept for every task of the executor JVM with the same
 * options), so an expensive resource such as a model is loaded in {@link #open}, not per batch.
 *
 * <p>{@link #compute} gets the rows of a batch, each holding the input columns in the declared
 * order with Spark's external Java types ({@code String}, {@code Long}, {@code Double}, a {@code
 * float[]} or list for a vector, ...), and returns exactly one value per row, in the same order:
 * {@code null} for NULL; for a fixed-size vector column a {@code float[]} (or a list of floats)
 * of exactly the declared length. A wrong count, type or length fails the backfill with an error
 * naming the table and the column. Rows whose inputs are all NULL are not passed: their value is
 * NULL. An exception is handled by the backfill's {@code error_handling} (retry, skip the batch's
 * rows, which then stay NULL, or fail).
 *
 * <p>Functions must be deterministic: a backfill resumed after a crash computes rows again.
 */
public interface ColumnFunction extends AutoCloseable {
  /**
   * Checks the definition's options and input columns when the column is added (on the driver,
   * on an instance that is not opened), so that a bad value fails once with its name. Throw
   * {@link InvalidOptionException} naming the option, its value and what is allowed. The
   * default accepts everything.
   *
   * @param options the definition's options
   * @param inputSchema the input columns the function will be given
   * @param outputType the column's declared type, or {@code null} when the definition leaves it
   *     to {@link #outputType}
   */
  default void validate(Map<String, String> options, StructType inputSchema,
      DataType outputType) {}

  /**
   * The column's type for these inputs and options, used when a definition does not declare it;
   * {@code null} when the function cannot tell. A vector column is an {@code ARRAY<FLOAT>} whose
   * size {@link #vectorSize} gives.
   */
  default DataType outputType(Map<String, String> options, StructType inputSchema) {
    return null;
  }

  /**
   * The fixed length of the vectors this function returns for these options (the column is then
   * a fixed-size list of floats that a vector index can be built on), or {@code null} when its
   * output is not a vector of a fixed length.
   */
  default Integer vectorSize(Map<String, String> options) {
    return null;
  }

  /**
   * Whether one opened instance may serve every backfill task of an executor JVM that has the
   * same class and options, concurrently from several threads (a thread-safe function holding
   * a large resource, such as a model). The default is false: one instance per task.
   */
  default boolean shareable() {
    return false;
  }

  /** Prepares the instance for {@link #compute}, with the definition's options. */
  default void open(Map<String, String> options) throws Exception {}

  /** One value per row of {@code rows}, in order; see the class comment. */
  List<?> compute(List<Row> rows) throws Exception;

  @Override
  default void close() throws Exception {}
}
