package io.lancerest.spark.mv.function;

import java.util.Map;
import org.apache.spark.sql.types.StructType;

/**
 * What a chunker knows about the view it runs for, handed to {@code open}.
 *
 * @param viewName the view (or view table location, for local refreshes)
 * @param inputSchema the columns of the rows the chunker receives (for {@link BatchChunker}:
 *     {@code __source_row_id} first)
 * @param outputSchema the declared output columns; every emitted row must match it
 * @param options the definition's options ({@code OPTIONS (...)} in SQL)
 */
public record ChunkerContext(String viewName, StructType inputSchema, StructType outputSchema,
    Map<String, String> options) {
  public ChunkerContext {
    options = options == null ? Map.of() : Map.copyOf(options);
  }

  /** An option as an int, or {@code fallback} when absent. */
  public int intOption(String key, int fallback) {
    String v = options.get(key);
    if (v == null || v.isBlank()) {
      return fallback;
    }
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("Chunker option '" + key + "' must be an integer, got '"
          + v + "'");
    }
  }
}
