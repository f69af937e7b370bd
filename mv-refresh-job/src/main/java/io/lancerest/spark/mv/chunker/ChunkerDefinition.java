package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.definition.ErrorHandling;
import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import java.util.List;
import java.util.Locale;

/**
 * What a chunker view computes: projection and filter over the source (Spark SQL), the function
 * (the framework's {@link FunctionEnvelope}) and its {@link ErrorHandling}.
 *
 * @param projection the view's projected columns; empty means every source column
 * @param filter Spark SQL predicate over source columns, or {@code null}
 * @param function the chunker: class, output schema, input columns, batch flag, options
 * @param errorHandling what a failing parent does
 * @param inheritInputColumns keep the chunker's input columns in the view too (by default only
 *     the projected columns the chunker does not consume are inherited)
 */
public record ChunkerDefinition(List<SourceQuery.OutputColumn> projection, String filter,
    FunctionEnvelope function, ErrorHandling errorHandling, boolean inheritInputColumns) {
  /** Envelope option that sets {@link #inheritInputColumns}. */
  public static final String INHERIT_INPUT_COLUMNS = "inherit_input_columns";

  public ChunkerDefinition {
    projection = projection == null ? List.of() : List.copyOf(projection);
    filter = filter == null || filter.isBlank() ? null : filter;
    if (function == null) {
      throw new InvalidViewDefinitionException("A chunker view needs a function envelope");
    }
    errorHandling = errorHandling == null ? ErrorHandling.FAIL : errorHandling;
  }

  /**
   * The definition of a stored view: {@code inherit_input_columns} is read from the envelope's
   * options. A source {@code limit} is refused: chunker views cap their rows with {@code
   * output_limit}.
   */
  public static ChunkerDefinition of(SourceQuery query, FunctionEnvelope function,
      ErrorHandling errorHandling) {
    if (query.limit() != null) {
      throw new InvalidViewDefinitionException("A chunker view cannot LIMIT its source rows "
          + "(source_query.limit = " + query.limit() + "); use the refresh option output_limit "
          + "to cap the number of view rows");
    }
    String inherit = function.options().get(INHERIT_INPUT_COLUMNS);
    return new ChunkerDefinition(query.projection(), query.filter(), function, errorHandling,
        inherit != null && Boolean.parseBoolean(inherit.trim().toLowerCase(Locale.ROOT)));
  }
}
