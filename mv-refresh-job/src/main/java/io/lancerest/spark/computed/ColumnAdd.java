package io.lancerest.spark.computed;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.function.ColumnFunction;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.FloatType$;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.lance.Dataset;

/**
 * Adds a computed column to a Lance table: every check first, then one commit of the all-NULL
 * column whose field metadata holds the definition. No data is written.
 */
public final class ColumnAdd {
  private ColumnAdd() {}

  /**
   * Checks {@code spec} against the table's latest version and adds the column.
   *
   * @param table the table's name as users write it, for messages
   * @return the stored definition
   */
  public static ComputedColumn add(String table, LanceLocation location, ComputedColumnSpec spec) {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = location.open(a, null)) {
      ComputedColumn def = check(table, ds.getSchema(), spec);
      ds.addColumns(List.of(withMetadata(def)));
      return def;
    }
  }

  private static Field withMetadata(ComputedColumn def) {
    Field f = def.outputField();
    return new Field(f.getName(), new org.apache.arrow.vector.types.pojo.FieldType(true,
        f.getType(), null, def.withMetadata(f.getMetadata())), f.getChildren());
  }

  /** The definition {@code spec} makes on a table of {@code schema}, or the refusal. */
  static ComputedColumn check(String table, Schema schema, ComputedColumnSpec spec) {
    String column = spec.column();
    if (column == null || column.isBlank()) {
      throw new ComputedColumnException("Adding a computed column to table " + table
          + ": name the column.");
    }
    String where = "Computed column '" + column + "' of table " + table;
    StructType tableSchema = LanceArrowUtils.fromArrowSchema(schema);
    for (StructField f : tableSchema.fields()) {
      if (f.name().equalsIgnoreCase(column)) {
        throw new ComputedColumnException(where + ": the table already has a column '"
            + f.name() + "'. Choose another name, or drop that column first.");
      }
    }
    if (spec.inputColumns().isEmpty()) {
      throw new ComputedColumnException(where + " has no input columns: name the columns its "
          + "function reads, e.g. COMPUTED BY '" + spec.className() + "' (text).");
    }
    List<StructField> inputs = new ArrayList<>();
    for (String in : spec.inputColumns()) {
      StructField found = null;
      for (StructField f : tableSchema.fields()) {
        if (f.name().equals(in)) {
          found = f;
        }
      }
      if (found == null) {
        throw new ComputedColumnException(where + ": input column '" + in + "' does not exist."
            + " The table's columns are " + List.of(tableSchema.fieldNames()) + ".");
      }
      // a backfill of that column rewrites its values in place, under the same fragment ids,
      // which this column's checkpoint cannot see: this column would keep stale values
      if (schema.findField(in).getMetadata().containsKey(ComputedColumn.METADATA_KEY)) {
        throw new ComputedColumnException(where + ": input column '" + in + "' is itself a "
            + "computed column, and a computed column reads stored columns only. Compute it "
            + "from the columns '" + in + "' is computed from.");
      }
      inputs.add(found);
    }
    StructType inputSchema = new StructType(inputs.toArray(StructField[]::new));
    ColumnFunction fn = ColumnFunctions.instantiate(spec.className(), where);
    DataType declared = spec.declaredType();
    if (declared != null && !ColumnTypes.supported(declared)) {
      throw new ComputedColumnException(where + ": type " + declared.sql() + " is not one a "
          + "computed column can have; use BOOLEAN, INT, BIGINT, FLOAT, DOUBLE, STRING or "
          + "ARRAY<FLOAT> (a vector).");
    }
    try {
      fn.validate(spec.options(), inputSchema, declared);
    } catch (RuntimeException e) {
      throw new ComputedColumnException(where + ": its function " + spec.className()
          + " refused the definition: " + e.getMessage(), e);
    }
    DataType offered;
    Integer size;
    try {
      offered = fn.outputType(spec.options(), inputSchema);
      size = fn.vectorSize(spec.options());
    } catch (RuntimeException e) {
      throw new ComputedColumnException(where + ": its function " + spec.className()
          + " failed to tell its output type: " + e, e);
    }
    DataType type = declared != null ? declared : offered;
    if (type == null) {
      throw new ComputedColumnException(where + ": its function does not tell its output type; "
          + "declare the column's type, e.g. ADD COLUMN " + column + " STRING COMPUTED BY ...");
    }
    if (declared != null && offered != null && !sameType(declared, offered)) {
      throw new ComputedColumnException(where + ": declared type " + declared.sql()
          + " does not agree with its function's output type " + offered.sql()
          + ". Declare " + offered.sql() + " or leave the type out.");
    }
    if (!ColumnTypes.supported(type)) {
      throw new ComputedColumnException(where + ": its function's output type " + type.sql()
          + " is not one a computed column can have.");
    }
    if (ColumnTypes.isVector(type) && (size == null || size <= 0)) {
      throw new ComputedColumnException(where + ": a vector column needs a fixed length, and "
          + "function " + spec.className() + " gives none (vectorSize). Use a function that "
          + "declares its vector length.");
    }
    if (!ColumnTypes.isVector(type) && size != null) {
      throw new ComputedColumnException(where + ": its function returns vectors of " + size
          + " floats; declare the column ARRAY<FLOAT> or leave the type out.");
    }
    Field out = ColumnTypes.arrowField(column, type, size, null);
    FunctionEnvelope env = FunctionEnvelope.java(spec.className(), spec.className(), "1",
        new Schema(List.of(out)), spec.inputColumns(), false, spec.options());
    return new ComputedColumn(column, env, spec.inputColumns(), spec.autoBackfill());
  }

  private static boolean sameType(DataType a, DataType b) {
    if (ColumnTypes.isVector(a) && b instanceof ArrayType arr) {
      return arr.elementType() == FloatType$.MODULE$;
    }
    return a.sameType(b) || a.sql().toLowerCase(Locale.ROOT)
        .equals(b.sql().toLowerCase(Locale.ROOT));
  }
}
