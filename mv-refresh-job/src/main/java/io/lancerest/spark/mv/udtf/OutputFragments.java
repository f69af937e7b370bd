package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.commit.FragmentShipping;
import java.util.Iterator;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.encoders.ExpressionEncoder;
import org.apache.spark.sql.catalyst.encoders.RowEncoder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;

/**
 * Streams a UDTF's output rows into new, uncommitted fragments of the view table, through
 * {@link FragmentShipping#writeRows}: rows are pulled lazily, checked against the declared
 * schema, encoded and written, so a partition's output is never held whole.
 */
final class OutputFragments {
  private final String viewLocation;
  private final Map<String, String> storageOptions;
  private final Schema arrowSchema;
  private final StructType sparkSchema;
  private final int maxRowsPerFile;
  /** Each output column's vector size, or 0 for a column that is no vector. */
  private final int[] vectorSizes;
  // Built once per task: creating it generates and compiles code, far too slow per partition.
  private final ExpressionEncoder.Serializer<Row> encoder;

  OutputFragments(String viewLocation, Map<String, String> storageOptions, Schema arrowSchema,
      int maxRowsPerFile) {
    this.viewLocation = viewLocation;
    this.storageOptions = storageOptions;
    this.arrowSchema = new Schema(arrowSchema.getFields());
    this.sparkSchema = LanceArrowUtils.fromArrowSchema(arrowSchema);
    this.maxRowsPerFile = maxRowsPerFile;
    this.vectorSizes = arrowSchema.getFields().stream()
        .mapToInt(f -> f.getType() instanceof ArrowType.FixedSizeList l ? l.getListSize() : 0)
        .toArray();
    this.encoder = ExpressionEncoder.apply(RowEncoder.encoderFor(sparkSchema)).createSerializer();
  }

  StructType sparkSchema() {
    return sparkSchema;
  }

  /**
   * Writes {@code rows}; an exception thrown while pulling them (by the UDTF or the schema
   * check) reaches the caller as-is, so error handling sees the function's own exception.
   */
  FragmentShipping.Written write(BufferAllocator allocator, Iterator<Row> rows, String where) {
    Iterator<InternalRow> encoded = new Iterator<>() {
      @Override
      public boolean hasNext() {
        return rows.hasNext();
      }

      @Override
      public InternalRow next() {
        Row row = rows.next();
        OutputRows.check(row, sparkSchema, vectorSizes, where);
        try {
          return encoder.apply(row);
        } catch (RuntimeException e) {
          throw new UdtfOutputMismatchException(where + " returned a row the declared output "
              + "schema " + sparkSchema.simpleString() + " cannot hold: " + e.getMessage());
        }
      }
    };
    return FragmentShipping.writeRows(LanceLocation.of(viewLocation, storageOptions), allocator,
        arrowSchema,
        encoded, maxRowsPerFile, null);
  }
}
