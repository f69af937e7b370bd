package io.lancerest.spark.mv.layout;

import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Which columns of a view are vectors: fixed-size lists of floats, the only columns a vector
 * index accepts.
 *
 * <p>Spark has no fixed-size list type. lance-spark reads a Lance {@code FixedSizeList(n)} as
 * {@code ARRAY<FLOAT>} (or {@code DOUBLE}) whose field metadata holds {@value #SIZE_KEY} =
 * {@code n}, and writes such a field back as a fixed-size list. Spark's analyser keeps an
 * attribute's metadata through projections, filters and renames, so a view column that is a
 * source vector arrives with its size; a computed column gets one from the table property
 * {@code <column>.}{@value #SIZE_KEY}, as a catalog table does.
 */
public final class VectorColumns {
  /** lance-spark's field metadata key for a vector's size, and the table property's suffix. */
  public static final String SIZE_KEY = "arrow.fixed-size-list.size";

  /** The engine's own columns of a view table, left out of what messages list. */
  private static final java.util.Set<String> INTERNAL = java.util.Set.of(
      GenevaLayout.SOURCE_ROW_ID, GenevaLayout.IS_SET, GenevaLayout.CHILD_INDEX);

  private VectorColumns() {}

  /** The table property that declares {@code column} a vector. */
  public static String property(String column) {
    return column + "." + SIZE_KEY;
  }

  /** The vector size a Spark column carries, or {@code null} when it is no vector. */
  public static Integer size(StructField f) {
    if (!isFloatArray(f.dataType()) || !f.metadata().contains(SIZE_KEY)) {
      return null;
    }
    return Math.toIntExact(f.metadata().getLong(SIZE_KEY));
  }

  /** The vector size of an Arrow field, or {@code null} when it is no fixed-size list. */
  public static Integer size(Field f) {
    return f.getType() instanceof ArrowType.FixedSizeList l ? l.getListSize() : null;
  }

  /**
   * What a view column keeps of its expression's metadata: the vector size only (other keys,
   * such as a Dataset's column references, do not belong in a table's schema).
   */
  public static Metadata inherited(StructField f) {
    Integer n = size(f);
    return n == null ? Metadata.empty() : withSize(Metadata.empty(), n);
  }

  /**
   * The vector sizes that {@code <column>.arrow.fixed-size-list.size} table properties declare,
   * by column name in the order given.
   *
   * @throws InvalidViewDefinitionException when a value is not a positive whole number
   */
  public static Map<String, Integer> declared(Map<String, String> tableProperties,
      String viewName) {
    Map<String, Integer> out = new LinkedHashMap<>();
    if (tableProperties == null) {
      return out;
    }
    String suffix = "." + SIZE_KEY;
    tableProperties.forEach((k, v) -> {
      if (k.endsWith(suffix) && k.length() > suffix.length()) {
        String column = k.substring(0, k.length() - suffix.length());
        int n;
        try {
          n = Integer.parseInt(v == null ? "" : v.trim());
        } catch (NumberFormatException e) {
          n = 0;
        }
        if (n <= 0) {
          throw new InvalidViewDefinitionException("TBLPROPERTIES '" + k + "' = '" + v
              + "' of view " + viewName + " is not a vector size; give a positive whole "
              + "number (the vector's number of floats)");
        }
        out.put(column, n);
      }
    });
    return out;
  }

  /**
   * A query view's columns with the declared vector sizes applied: each declared column must
   * be a column of the view, of type {@code ARRAY<FLOAT>} or {@code ARRAY<DOUBLE>}, and a
   * vector already (a source vector) only of the same size.
   */
  public static StructType declare(StructType view, Map<String, Integer> declared,
      String viewName) {
    if (declared.isEmpty()) {
      return view;
    }
    StructField[] fields = view.fields().clone();
    for (Map.Entry<String, Integer> d : declared.entrySet()) {
      int i = indexOf(view, d.getKey(), viewName);
      StructField f = fields[i];
      Integer has = size(f);
      if (has != null) {
        requireSame(d.getKey(), has, d.getValue(), viewName, "in its source");
      } else if (!isFloatArray(f.dataType())) {
        throw notFloats(d.getKey(), f.dataType().sql(), viewName);
      }
      fields[i] = new StructField(f.name(), f.dataType(), f.nullable(),
          withSize(f.metadata(), d.getValue()));
    }
    return new StructType(fields);
  }

  /**
   * A function's output schema with the declared vector sizes applied to its columns; a
   * declared name that is no output column is left for {@link #check}.
   */
  public static Schema declare(Schema output, Map<String, Integer> declared, String viewName) {
    if (declared.isEmpty()) {
      return output;
    }
    List<Field> fields = new ArrayList<>();
    for (Field f : output.getFields()) {
      Integer want = declared.get(f.getName());
      if (want == null) {
        fields.add(f);
        continue;
      }
      Integer has = size(f);
      if (has != null) {
        requireSame(f.getName(), has, want, viewName, "in the function's output schema");
        fields.add(f);
      } else if (f.getType() instanceof ArrowType.List
          && f.getChildren().get(0).getType() instanceof ArrowType.FloatingPoint) {
        fields.add(new Field(f.getName(), new FieldType(f.isNullable(),
            new ArrowType.FixedSizeList(want), f.getDictionary(), f.getMetadata()),
            f.getChildren()));
      } else {
        throw notFloats(f.getName(), String.valueOf(f.getType()), viewName);
      }
    }
    return new Schema(fields, output.getCustomMetadata());
  }

  /**
   * Checks a function envelope given whole (option {@code udtf}), whose output schema the
   * declared sizes cannot change: each declared output column must be a vector of that size in
   * it already.
   */
  public static void requireInEnvelope(Schema output, Map<String, Integer> declared,
      String viewName) {
    for (Field f : output.getFields()) {
      Integer want = declared.get(f.getName());
      if (want == null) {
        continue;
      }
      Integer has = size(f);
      if (has == null) {
        throw new InvalidViewDefinitionException("Column '" + f.getName() + "' of view "
            + viewName + " is an output of the function envelope given in option 'udtf', "
            + "whose output schema makes it " + f.getType() + ", not a vector; TBLPROPERTIES '"
            + property(f.getName()) + "' cannot change a given envelope. Declare the column a "
            + "fixed-size list of " + want + " floats in the envelope's output schema");
      }
      requireSame(f.getName(), has, want, viewName, "in the function's output schema");
    }
  }

  /**
   * Refuses declared vector sizes on an aggregate view: its columns are computed by its
   * grouping, which writes no vectors.
   */
  public static void refuseOnAggregate(Map<String, Integer> declared, String viewName) {
    if (!declared.isEmpty()) {
      String column = declared.keySet().iterator().next();
      throw new InvalidViewDefinitionException("View " + viewName + " is an aggregate view, "
          + "which does not make vector columns; remove TBLPROPERTIES '" + property(column)
          + "', or make a view without GROUP BY whose column is the vector");
    }
  }

  /**
   * Checks that the view table's schema has every declared column as a vector of the declared
   * size; a column the engine cannot make one (a chunker view's carried column, a function
   * whose stored envelope was given) is refused here, at CREATE.
   */
  public static void check(Schema view, Map<String, Integer> declared, String viewName) {
    for (Map.Entry<String, Integer> d : declared.entrySet()) {
      Field f = view.getFields().stream().filter(x -> x.getName().equals(d.getKey()))
          .findFirst().orElseThrow(() -> noSuchColumn(d.getKey(), view.getFields().stream()
              .map(Field::getName).toList(), viewName));
      Integer has = size(f);
      if (has == null) {
        throw new InvalidViewDefinitionException("Column '" + d.getKey() + "' of view "
            + viewName + " cannot be declared a vector with TBLPROPERTIES '"
            + property(d.getKey()) + "': it is copied from the view's source, where it is a "
            + "list without a fixed size. Declare its size on the source table, or compute "
            + "the vector in the view's function and declare it there");
      }
      requireSame(d.getKey(), has, d.getValue(), viewName, "in its source");
    }
  }

  private static int indexOf(StructType view, String column, String viewName) {
    for (int i = 0; i < view.fields().length; i++) {
      if (view.fields()[i].name().equals(column)) {
        return i;
      }
    }
    throw noSuchColumn(column, List.of(view.fieldNames()), viewName);
  }

  private static InvalidViewDefinitionException noSuchColumn(String column, List<String> columns,
      String viewName) {
    return new InvalidViewDefinitionException("TBLPROPERTIES '" + property(column) + "' of view "
        + viewName + " names no column of the view; its columns are " + columns.stream()
        .filter(c -> !INTERNAL.contains(c)).toList() + " (names "
        + "are case-sensitive here)");
  }

  private static void requireSame(String column, int has, int declared, String viewName,
      String where) {
    if (has != declared) {
      throw new InvalidViewDefinitionException("Column '" + column + "' of view " + viewName
          + " is a vector of " + has + " floats " + where + ", but TBLPROPERTIES declares '"
          + property(column) + "' = '" + declared + "'. Remove the property (a vector keeps "
          + "its size) or declare " + has);
    }
  }

  private static InvalidViewDefinitionException notFloats(String column, String type,
      String viewName) {
    return new InvalidViewDefinitionException("Column '" + column + "' of view " + viewName
        + " is " + type + "; TBLPROPERTIES '" + property(column) + "' declares a vector, "
        + "which must be ARRAY<FLOAT> or ARRAY<DOUBLE>. Cast the column, or remove the "
        + "property");
  }

  private static boolean isFloatArray(org.apache.spark.sql.types.DataType t) {
    return t instanceof ArrayType a
        && (a.elementType() instanceof FloatType || a.elementType() instanceof DoubleType);
  }

  private static Metadata withSize(Metadata m, int n) {
    return new MetadataBuilder().withMetadata(m).putLong(SIZE_KEY, n).build();
  }
}
