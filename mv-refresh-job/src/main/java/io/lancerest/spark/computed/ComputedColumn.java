package io.lancerest.spark.computed;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.error.MaterializedViewException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * The definition of a computed column, as stored with the table: in the column's Lance field
 * metadata under {@link #METADATA_KEY}, so that any client reading the schema finds it.
 *
 * <p>The stored value is canonical JSON: {@code format} ({@link #FORMAT}), {@code udf} (the
 * base64 {@code lancerest.function.v1} envelope, whose {@code output_schema} is the one column),
 * {@code udf_sha} (SHA-256 of the decoded envelope), {@code udf_name}, {@code udf_version},
 * {@code input_columns} and {@code auto_backfill}: the fields of the spec's {@code
 * AddVirtualColumnEntry} this engine uses.
 *
 * @param column the column's name
 * @param function the function envelope: class, name, version, options, output schema (one
 *     field: the column, with its type)
 * @param inputColumns the columns passed to the function, in order
 * @param autoBackfill whether the engine backfills the column after each commit of the table
 */
public record ComputedColumn(String column, FunctionEnvelope function, List<String> inputColumns,
    boolean autoBackfill) {
  /** The field-metadata key holding the definition. */
  public static final String METADATA_KEY = "lancerest:computed";
  /** The format of the stored definition. */
  public static final String FORMAT = "lancerest.computed.v1";

  private static final ObjectMapper CANONICAL = JsonMapper.builder()
      .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
      .build();

  public ComputedColumn {
    if (column == null || column.isBlank()) {
      throw new ComputedColumnException("A computed column needs a name.");
    }
    if (function == null) {
      throw new ComputedColumnException("Computed column '" + column + "' has no function.");
    }
    if (inputColumns == null || inputColumns.isEmpty()) {
      throw new ComputedColumnException("Computed column '" + column + "' has no input "
          + "columns: name the columns its function reads.");
    }
    inputColumns = List.copyOf(inputColumns);
    if (function.outputSchema().getFields().size() != 1) {
      throw new ComputedColumnException("Computed column '" + column + "': its function "
          + "envelope must declare exactly one output column, got "
          + function.outputSchema().getFields().size() + ".");
    }
  }

  /** The column as an Arrow field, with its type from the envelope, named {@link #column}. */
  public Field outputField() {
    Field f = function.outputSchema().getFields().get(0);
    return new Field(column, f.getFieldType(), f.getChildren());
  }

  /** The stored form: the value of {@link #METADATA_KEY}. */
  public String toMetadataValue() {
    ObjectNode n = CANONICAL.createObjectNode();
    n.put("format", FORMAT);
    n.put("udf", function.toBase64());
    n.put("udf_sha", function.sha256Hex());
    n.put("udf_name", function.name());
    n.put("udf_version", function.version());
    ArrayNode in = n.putArray("input_columns");
    inputColumns.forEach(in::add);
    n.put("auto_backfill", autoBackfill);
    try {
      return CANONICAL.writeValueAsString(n);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The field metadata to store: {@code existing} plus {@link #METADATA_KEY}. */
  public Map<String, String> withMetadata(Map<String, String> existing) {
    Map<String, String> m = new HashMap<>(existing == null ? Map.of() : existing);
    m.put(METADATA_KEY, toMetadataValue());
    return m;
  }

  /**
   * The definition stored in {@code metadata} (a column's field metadata), or {@code null} when
   * the column is not computed.
   *
   * @param table the table's name, for messages
   * @throws ComputedColumnException the stored value is not a definition this engine reads (an
   *     envelope for another language gets the same refusal as for views)
   */
  public static ComputedColumn fromMetadata(String table, String column,
      Map<String, String> metadata) {
    String value = metadata == null ? null : metadata.get(METADATA_KEY);
    if (value == null) {
      return null;
    }
    String where = "Computed column '" + column + "' of table " + table;
    JsonNode n;
    try {
      n = CANONICAL.readTree(value);
    } catch (IOException e) {
      throw new ComputedColumnException(where + ": its stored definition (field metadata '"
          + METADATA_KEY + "') is not JSON: " + e.getMessage(), e);
    }
    if (n == null || !FORMAT.equals(n.path("format").asText(null))) {
      throw new ComputedColumnException(where + ": its stored definition has format '"
          + (n == null ? null : n.path("format").asText(null)) + "', and this engine reads "
          + FORMAT + ". Upgrade the engine, or drop the column and add it again.");
    }
    FunctionEnvelope envelope;
    try {
      envelope = FunctionEnvelope.decode(n.path("udf").asText(null),
          n.path("udf_sha").asText(null));
    } catch (MaterializedViewException e) {
      throw new ComputedColumnException(where + ": " + e.getMessage(), e);
    }
    List<String> in = new ArrayList<>();
    n.path("input_columns").forEach(c -> in.add(c.asText()));
    return new ComputedColumn(column, envelope, in, n.path("auto_backfill").asBoolean(false));
  }
}
