package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;

/**
 * The columns of a chunker view: {@code __source_row_id int64}, {@code __child_index int32},
 * the inherited projection columns, then the chunker's outputs. Computed from the projected
 * source schema and the envelope; the view table's schema must keep this column order.
 *
 * @param projected the projected source columns (Spark), in projection order
 * @param inputColumns the chunker's inputs (names among {@code projected})
 * @param inherited the projected columns copied into every child
 * @param output the chunker's declared outputs (Arrow, as in the envelope)
 */
record ChunkerLayout(StructType projected, List<String> inputColumns, List<String> inherited,
    Schema output) {
  static final String SOURCE_ROW_ID = io.lancerest.spark.mv.layout.GenevaLayout.SOURCE_ROW_ID;
  static final String CHILD_INDEX = io.lancerest.spark.mv.layout.GenevaLayout.CHILD_INDEX;

  static ChunkerLayout of(StructType projected, List<String> declaredInputs, Schema output,
      boolean inheritInputs) {
    Set<String> names = new LinkedHashSet<>(List.of(projected.fieldNames()));
    List<String> inputs = declaredInputs == null ? List.of(projected.fieldNames())
        : List.copyOf(declaredInputs);
    if (inputs.isEmpty()) {
      throw new InvalidViewDefinitionException("The chunker has no input columns");
    }
    for (String in : inputs) {
      if (!names.contains(in)) {
        throw new InvalidViewDefinitionException("Chunker input column '" + in + "' is not in "
            + "the view's projection " + names + "; add it to the SELECT list");
      }
    }
    List<String> inherited = new ArrayList<>();
    for (String n : names) {
      if (inheritInputs || !inputs.contains(n)) {
        inherited.add(n);
      }
    }
    Set<String> seen = new LinkedHashSet<>(List.of(SOURCE_ROW_ID, CHILD_INDEX));
    for (String n : inherited) {
      if (!seen.add(n.toLowerCase(Locale.ROOT))) {
        throw new InvalidViewDefinitionException("Projected column '" + n + "' clashes with a "
            + "reserved view column");
      }
    }
    for (Field f : output.getFields()) {
      if (!seen.add(f.getName().toLowerCase(Locale.ROOT))) {
        throw new InvalidViewDefinitionException("Chunker output column '" + f.getName()
            + "' clashes with a projected or reserved column; rename it in the SELECT list or "
            + "the output schema");
      }
    }
    return new ChunkerLayout(projected, inputs, List.copyOf(inherited), output);
  }

  /** The rows a {@link Chunker} receives. */
  StructType inputSchema() {
    StructType s = new StructType();
    for (String n : inputColumns) {
      s = s.add(projected.apply(n));
    }
    return s;
  }

  /** The rows a {@link BatchChunker} receives: {@code __source_row_id} first. */
  StructType batchInputSchema() {
    StructType s = new StructType().add(SOURCE_ROW_ID, DataTypes.LongType, false);
    for (StructField f : inputSchema().fields()) {
      s = s.add(f);
    }
    return s;
  }

  StructType outputSpark() {
    return LanceArrowUtils.fromArrowSchema(output);
  }

  /** The view table's Arrow schema (no metadata). */
  Schema viewSchema() {
    List<Field> fields = new ArrayList<>();
    fields.add(new Field(SOURCE_ROW_ID, FieldType.notNullable(new ArrowType.Int(64, true)),
        null));
    fields.add(new Field(CHILD_INDEX, FieldType.notNullable(new ArrowType.Int(32, true)), null));
    for (String n : inherited) {
      StructField f = projected.apply(n);
      fields.add(LanceArrowUtils.toArrowField(f.name(), f.dataType(), f.nullable(), "UTC",
          f.metadata()));
    }
    fields.addAll(output.getFields());
    return new Schema(fields);
  }

  /** Positions (in the projected row) of the inherited and input columns. */
  int[] inheritedPositions() {
    return positions(inherited);
  }

  int[] inputPositions() {
    return positions(inputColumns);
  }

  private int[] positions(List<String> cols) {
    int[] out = new int[cols.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = projected.fieldIndex(cols.get(i));
    }
    return out;
  }

  /** Checks that an existing view table has exactly this layout's columns, in order. */
  void checkMatches(Schema viewTable, String view) {
    List<String> want = viewSchema().getFields().stream().map(Field::getName).toList();
    List<String> have = viewTable.getFields().stream().map(Field::getName).toList();
    if (!want.equals(have)) {
      throw new InvalidViewDefinitionException("View '" + view + "' has columns " + have
          + " but its definition produces " + want + " (the source or the chunker's output "
          + "schema changed). Re-create the view to pick up the new columns");
    }
  }
}
