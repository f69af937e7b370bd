package io.lancerest.spark.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

/** Scan batches are larger only for narrow rows, by the columns and by what rows take on disk. */
class ScanBatchRowsTest {
  private static Field f(String name, ArrowType t) {
    return new Field(name, FieldType.nullable(t), null);
  }

  @Test
  void byTheColumns() {
    Schema narrow = new Schema(List.of(f("id", new ArrowType.Int(64, true)),
        f("name", ArrowType.Utf8.INSTANCE),
        f("v", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE))));
    assertEquals(ScanBatchRows.NARROW, ScanBatchRows.forSchema(narrow));
    Schema vector = new Schema(List.of(f("id", new ArrowType.Int(64, true)),
        new Field("emb", FieldType.nullable(new ArrowType.FixedSizeList(8)),
            List.of(f("item", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE))))));
    assertEquals(ScanBatchRows.DEFAULT, ScanBatchRows.forSchema(vector));
    assertEquals(ScanBatchRows.DEFAULT, ScanBatchRows.forSchema(new Schema(List.of(
        f("blob", ArrowType.Binary.INSTANCE)))));
  }

  @Test
  void byWhatARowTakesInTheFiles() {
    assertEquals(ScanBatchRows.NARROW, ScanBatchRows.forSize(40L * 5_000_000, 5_000_000));
    assertEquals(20_971, ScanBatchRows.forSize(200L * 1000, 1000));
    assertEquals(ScanBatchRows.DEFAULT, ScanBatchRows.forSize(4096L * 1000, 1000));
    assertEquals(ScanBatchRows.DEFAULT, ScanBatchRows.forSize(0, 0), "empty: lance-spark's");
  }
}
