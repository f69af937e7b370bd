package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.definition.FunctionEnvelope;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Row;

/**
 * Writes buffered children into an Arrow batch of the view's schema (parent id, child index,
 * inherited columns, the chunker's outputs), failing on output that does not match the declared
 * schema.
 */
final class ChildEncoder {
  /** A buffered child: its parent, its index among the parent's children, and its row. */
  record Pending(long sid, int childIndex, Row parent, ChildRow child) {}

  private final String viewName;
  private final FunctionEnvelope function;
  private final int[] inheritedPositions;
  private final List<ArrowSetters.Setter> setters = new ArrayList<>();
  private final int outputs;

  /** @param inheritedPositions where each inherited column is in a parent row */
  ChildEncoder(String viewName, Schema viewSchema, FunctionEnvelope function,
      int[] inheritedPositions) {
    this.viewName = viewName;
    this.function = function;
    this.inheritedPositions = inheritedPositions;
    List<Field> fields = viewSchema.getFields();
    for (int i = 0; i < fields.size(); i++) {
      Field f = fields.get(i);
      ArrowSetters.Setter set = ArrowSetters.forField(f, f.getName());
      // the chunker's own vectors (after the ids and the inherited columns) are its output
      boolean output = i >= 2 + inheritedPositions.length;
      setters.add(output && f.getType() instanceof ArrowType.FixedSizeList
          ? ArrowSetters.noNullElements(set, f, f.getName()) : set);
    }
    outputs = function.outputSchema().getFields().size();
  }

  /** Replaces what {@code root} holds by {@code pending}. */
  void write(VectorSchemaRoot root, List<Pending> pending) {
    root.allocateNew();
    BigIntVector sids = (BigIntVector) root.getVector(0);
    IntVector idx = (IntVector) root.getVector(1);
    List<FieldVector> vectors = root.getFieldVectors();
    int inherited = inheritedPositions.length;
    for (int i = 0; i < pending.size(); i++) {
      Pending p = pending.get(i);
      sids.setSafe(i, p.sid());
      idx.setSafe(i, p.childIndex());
      for (int j = 0; j < inherited; j++) {
        int col = 2 + j;
        try {
          setters.get(col).set(vectors.get(col), i, p.parent().get(inheritedPositions[j]));
        } catch (ArrowSetters.Mismatch m) {
          throw new ChunkerRefreshException("Cannot copy inherited column into view '"
              + viewName + "': " + m.getMessage(), m);
        }
      }
      Row r = p.child().row();
      int offset = p.child().offset();
      int have = r == null ? 0 : r.length() - offset;
      if (have != outputs) {
        List<Field> out = function.outputSchema().getFields();
        String column = out.get(Math.min(Math.max(have, 0), outputs - 1)).getName();
        throw new ChunkerOutputException(column, "Chunker '" + function.name()
            + "' emitted a row with " + have + " output value(s) for source row id "
            + p.sid() + "; the output schema declares " + outputs + " ("
            + out.stream().map(Field::getName).toList() + "), first unmatched column '"
            + column + "'");
      }
      for (int j = 0; j < outputs; j++) {
        int col = 2 + inherited + j;
        try {
          setters.get(col).set(vectors.get(col), i, r.get(offset + j));
        } catch (ArrowSetters.Mismatch m) {
          throw new ChunkerOutputException(m.path, "Chunker '" + function.name()
              + "' emitted " + m.getMessage() + " (source row id " + p.sid() + ", child "
              + p.childIndex() + "). Fix the chunker or its declared output schema");
        }
      }
    }
    root.setRowCount(pending.size());
  }
}
