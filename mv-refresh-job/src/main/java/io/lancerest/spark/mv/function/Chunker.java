package io.lancerest.spark.mv.function;

import io.lancerest.spark.mv.error.InvalidOptionException;
import java.util.Iterator;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructType;

/**
 * A chunker, row form: turns one source row into any number of output rows (text into passages,
 * a document into pages).
 *
 * <p>The engine creates instances with the public no-argument constructor, one per thread that
 * calls it, calls {@link #open} once, then {@link #chunk} per parent, then {@link #close}.
 *
 * <p>{@link #chunk} returns an iterator that the engine drains into fragments as it goes: a
 * chunker that computes children lazily (as the shipped ones do) can emit any number of them
 * without holding them in memory. Each emitted {@link Row} holds the output columns in the
 * declared order, with Spark's external Java types ({@code String}, {@code Integer}, {@code
 * Long}, {@code byte[]}, {@code java.util.List} or Spark {@code Seq} for arrays, {@code Row} for
 * structs). A value of the wrong type, or {@code null} in a non-nullable column, fails the
 * refresh with a {@link ChunkerOutputException} naming the column. An exception thrown by the
 * chunker (or by its iterator) is handled by the view's {@code error_handling}.
 *
 * <p>Chunkers must be deterministic: a refresh after a crash re-runs parents and must produce the
 * same children.
 */
public interface Chunker {
  /**
   * Checks the definition's options and input columns: at CREATE, before anything is created,
   * and before every refresh, so that a bad value fails once with its name instead of failing
   * every source row. Throw {@link InvalidOptionException} naming the option, its value and what
   * is allowed ({@code new InvalidOptionException("chunk_size", "-3", "a positive whole
   * number")}); the engine adds the view and the class to the message. Called on the driver, on
   * an instance that is not opened. The default accepts everything.
   *
   * @param options the definition's options ({@code OPTIONS (...)} in SQL)
   * @param inputSchema the input columns the chunker will be given
   */
  default void validate(Map<String, String> options, StructType inputSchema) {}

  /** Called once per instance before the first {@link #chunk}. */
  default void open(ChunkerContext context) {}

  /**
   * The children of one parent, in order ({@code __child_index} 0, 1, ...).
   *
   * @param input the parent's input columns (by name: {@code input.getAs("doc")})
   */
  Iterator<Row> chunk(Row input);

  default void close() {}

  /**
   * The output columns this chunker produces for the given options and input columns, used when
   * a view is created without an explicit output schema; {@code null} means the definition must
   * declare one.
   */
  default StructType outputSchema(Map<String, String> options, StructType inputSchema) {
    return null;
  }
}
