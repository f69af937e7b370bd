package io.lancerest.spark.mv.function;

import io.lancerest.spark.mv.error.InvalidOptionException;
import java.util.Iterator;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructType;

/**
 * A batch table function: it sees one whole partition of the source and emits any number of
 * rows (per-key clustering, dedup, top-k, per-video scene detection, ...).
 *
 * <p>The refresh engine instantiates the class named in the view's envelope through its public
 * no-argument constructor, once per Spark task, and calls {@link #process} once per partition:
 * <ul>
 *   <li>without {@code partition_by}: once, over the whole input;</li>
 *   <li>with {@code partition_by = col}: once per distinct value of {@code col}, NULL included;
 *   </li>
 *   <li>with {@code partition_by_indexed_column = col}: once per non-empty IVF partition of the
 *       column's vector index; the rows then carry a constant {@code _partition_id int32}.</li>
 * </ul>
 *
 * <p>{@code rows} streams the partition (sorted by key on the Spark side, never collected), so a
 * large partition does not need a large heap as long as the function itself does not buffer it.
 * Each row has the input columns ({@code input_columns}, or every column of the source query)
 * and {@link Row#schema()} describes them. The iterator is valid only during this call.
 *
 * <p>The returned rows must match the declared output schema, column by column, as Spark
 * external types ({@code Long} for int64, {@code String} for utf8, {@code float[]} or a list for
 * a fixed-size-list vector, ...). A mismatch fails the refresh with an error naming the column.
 * Output is consumed lazily, so returning a lazy iterator keeps memory flat.
 *
 * <p>An exception thrown here (or while the returned iterator is consumed) is a partition
 * failure, handled per the view's {@code error_handling}: retried (the engine replays the
 * partition's rows from a local spill file), skipped, or failing the refresh.
 */
@FunctionalInterface
public interface BatchUdtf {
  Iterator<Row> process(UdtfContext context, Iterator<Row> rows) throws Exception;

  /**
   * Checks the definition's options and input columns: at CREATE, before anything is created,
   * and before every refresh, so that a bad value fails once with its name instead of failing
   * every partition. Throw {@link InvalidOptionException} naming the option, its value and what
   * is allowed ({@code new InvalidOptionException("k", "-1", "a positive whole number")}); the
   * engine adds the view and the class to the message. Called on the driver. The default accepts
   * everything.
   *
   * @param inputSchema the columns of the rows {@link #process} will get (as for {@link
   *     #outputSchema}, with {@code _partition_id} under PARTITION BY INDEXED)
   * @param options the envelope's options ({@code OPTIONS (...)} in SQL)
   */
  default void validate(StructType inputSchema, Map<String, String> options) {}

  /**
   * The output schema this function produces for {@code inputSchema} and {@code options}, used
   * when a view is created without an explicit output schema (e.g. from SQL); {@code null} when
   * the function cannot tell, in which case the definition must declare one.
   */
  default StructType outputSchema(StructType inputSchema, Map<String, String> options) {
    return null;
  }
}
