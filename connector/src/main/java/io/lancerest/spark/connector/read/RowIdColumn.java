package io.lancerest.spark.connector.read;

import java.util.function.IntFunction;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * {@code _rowid} of each row, computed from its {@code _rowaddr} and its fragment's row-id
 * sequence ({@link RowIdSequence}), for fragments whose row ids lance-core computes in quadratic
 * time ({@link FragmentHazard#REWRITTEN_ROW_IDS}).
 */
public final class RowIdColumn extends ColumnVector {
  private final ColumnVector addresses;
  private final IntFunction<RowIdSequence> sequences;

  /**
   * @param addresses the rows' {@code _rowaddr}
   * @param sequences the row-id sequence of a fragment, by fragment id
   */
  public RowIdColumn(ColumnVector addresses, IntFunction<RowIdSequence> sequences) {
    super(DataTypes.LongType);
    this.addresses = addresses;
    this.sequences = sequences;
  }

  @Override
  public long getLong(int rowId) {
    long a = addresses.getLong(rowId);
    return sequences.apply((int) (a >>> 32)).rowIdAt(a & 0xffffffffL);
  }

  @Override
  public void close() {
    // the addresses belong to the batch they were read in
  }

  @Override
  public boolean hasNull() {
    return false;
  }

  @Override
  public int numNulls() {
    return 0;
  }

  @Override
  public boolean isNullAt(int rowId) {
    return false;
  }

  private static UnsupportedOperationException notLong() {
    return new UnsupportedOperationException("_rowid is a BIGINT column");
  }

  @Override
  public boolean getBoolean(int rowId) {
    throw notLong();
  }

  @Override
  public byte getByte(int rowId) {
    throw notLong();
  }

  @Override
  public short getShort(int rowId) {
    throw notLong();
  }

  @Override
  public int getInt(int rowId) {
    throw notLong();
  }

  @Override
  public float getFloat(int rowId) {
    throw notLong();
  }

  @Override
  public double getDouble(int rowId) {
    throw notLong();
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    throw notLong();
  }

  @Override
  public ColumnarMap getMap(int ordinal) {
    throw notLong();
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    throw notLong();
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    throw notLong();
  }

  @Override
  public byte[] getBinary(int rowId) {
    throw notLong();
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    throw notLong();
  }
}
