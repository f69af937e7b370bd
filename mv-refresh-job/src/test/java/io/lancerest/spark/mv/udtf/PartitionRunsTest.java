package io.lancerest.spark.mv.udtf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/** Cutting a key-sorted stream into partitions, and replaying one for a retry. */
class PartitionRunsTest {
  /** Rows (key, i) with the given keys, counting how many were pulled. */
  private static final class Source implements Iterator<Row> {
    private final Object[] keys;
    int pulled;

    Source(Object... keys) {
      this.keys = keys;
    }

    @Override
    public boolean hasNext() {
      return pulled < keys.length;
    }

    @Override
    public Row next() {
      return RowFactory.create(keys[pulled], pulled++);
    }
  }

  @Test
  void nullIsItsOwnPartitionAndUnreadRowsAreSkipped() {
    Source src = new Source(null, null, "a", "a", "a", "b");
    PartitionTask.Runs runs = new PartitionTask.Runs(src, 0);
    List<String> seen = new ArrayList<>();
    while (runs.nextRun()) {
      // Read only the first row of each partition; the rest must not leak into the next one.
      Row first = runs.next();
      seen.add(runs.key() + ":" + first.get(1));
    }
    assertEquals(List.of("null:0", "a:2", "b:5"), seen);
  }

  @Test
  void rowsArePulledOneAtATimeNeverAPartitionAhead() {
    Source src = new Source("a", "a", "a", "a", "b");
    PartitionTask.Runs runs = new PartitionTask.Runs(src, 0);
    assertTrue(runs.nextRun());
    assertEquals(1, src.pulled);
    runs.next();
    runs.next();
    assertEquals(2, src.pulled);
    while (runs.hasNext()) {
      runs.next();
    }
    assertEquals(5, src.pulled); // the first row of b was needed to see a's end
    assertTrue(runs.nextRun());
    assertEquals("b", runs.key());
    runs.next();
    assertFalse(runs.hasNext());
    assertFalse(runs.nextRun());
  }

  @Test
  void binaryKeysCompareByContent() {
    Source src = new Source(new byte[] {1}, new byte[] {1}, new byte[] {2});
    PartitionTask.Runs runs = new PartitionTask.Runs(src, 0);
    int partitions = 0;
    while (runs.nextRun()) {
      partitions++;
    }
    assertEquals(2, partitions);
    assertEquals(PartitionKeys.id(true, new byte[] {1}), PartitionKeys.id(true, new byte[] {1}));
  }

  @Test
  void keysOfDifferentTypesOrNullHaveDifferentIdentities() {
    assertFalse(PartitionKeys.id(true, "1").equals(PartitionKeys.id(true, 1)));
    assertFalse(PartitionKeys.id(true, null).equals(PartitionKeys.id(true, "null")));
    assertFalse(PartitionKeys.id(false, null).equals(PartitionKeys.id(true, null)));
    assertEquals("NULL", PartitionKeys.display(true, null));
  }

  @Test
  void aRetryReplaysTheRowsTheFailedAttemptReadAndTheOnesItDidNot() {
    StructType schema = new StructType().add("k", DataTypes.StringType)
        .add("i", DataTypes.IntegerType);
    Source src = new Source("a", "a", "a", "a");
    try (ReplayableRows rows = new ReplayableRows(src, schema)) {
      Iterator<Row> first = rows.first();
      first.next(); // the failed attempt read one row
      for (int attempt = 2; attempt <= 3; attempt++) {
        List<Object> again = new ArrayList<>();
        rows.replay().forEachRemaining(r -> again.add(r.get(1)));
        assertEquals(List.of(0, 1, 2, 3), again, "attempt " + attempt);
      }
    }
  }
}
