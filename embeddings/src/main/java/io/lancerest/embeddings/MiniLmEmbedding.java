package io.lancerest.embeddings;

import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.function.ColumnFunction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A text embedding for a computed column: the quantized all-MiniLM-L6-v2 sentence encoder,
 * run through ONNX Runtime inside the executor, with the model and tokenizer read from the
 * class path (no network). One STRING input column; the output is a 384-float vector.
 *
 * <p>Options: {@code threads} (ONNX Runtime threads per model call, default 1) and {@code
 * normalize} (default true: unit vectors, so that a dot product is the cosine similarity the
 * model was trained for, and L2, cosine and dot distances rank neighbours the same). NULL text
 * gives NULL; an empty text gives the model's vector of the empty sentence, like any other
 * text. Texts longer than 256 word pieces are cut there; chunk long documents first.
 *
 * <p>{@link #shareable}: one opened instance may serve several tasks, from several threads at
 * once; the model is loaded in {@link #open} and released in {@link #close}.
 */
public final class MiniLmEmbedding implements ColumnFunction {
  static final String NAME = "MiniLmEmbedding";

  /**
   * Guards the model against {@link #close} while {@link #compute} calls are using it: ONNX
   * Runtime must not free a session that a call is running.
   */
  private final ReadWriteLock lock = new ReentrantReadWriteLock();
  private MiniLmModel model;

  @Override
  public void validate(Map<String, String> options, StructType inputSchema,
      DataType outputType) {
    MiniLmOptions.parse(options);
    StructField[] fields = inputSchema.fields();
    if (fields.length != 1) {
      throw new InvalidOptionException(NAME + " takes one input column, the text to embed, got "
          + fields.length + (fields.length == 0 ? "" : " (" + String.join(", ",
              inputSchema.fieldNames()) + ")") + "; name a single STRING column");
    }
    if (!(fields[0].dataType() instanceof StringType)) {
      throw new InvalidOptionException(NAME + " embeds text: input column '" + fields[0].name()
          + "' is " + fields[0].dataType().sql() + "; give a STRING column (CAST it to STRING in "
          + "a view, or pick another column)");
    }
    if (outputType != null && !(outputType instanceof ArrayType array
        && array.elementType().equals(DataTypes.FloatType))) {
      throw new InvalidOptionException(NAME + " returns ARRAY<FLOAT> of "
          + MiniLmModel.DIMENSION + " values; the column is declared " + outputType.sql()
          + "; declare it ARRAY<FLOAT> or leave its type out");
    }
  }

  @Override
  public DataType outputType(Map<String, String> options, StructType inputSchema) {
    return DataTypes.createArrayType(DataTypes.FloatType, false);
  }

  @Override
  public Integer vectorSize(Map<String, String> options) {
    return MiniLmModel.DIMENSION;
  }

  @Override
  public boolean shareable() {
    return true;
  }

  @Override
  public void open(Map<String, String> options) throws Exception {
    MiniLmOptions parsed = MiniLmOptions.parse(options);
    lock.writeLock().lock();
    try {
      if (model != null) {
        throw new IllegalStateException(NAME + " is already open; close it before opening it "
            + "again");
      }
      model = MiniLmModel.load(parsed);
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** One {@code float[384]} per row, {@code null} for a NULL text; safe from several threads. */
  @Override
  public List<float[]> compute(List<Row> rows) throws Exception {
    lock.readLock().lock();
    try {
      if (model == null) {
        throw new IllegalStateException(NAME + " is not open: call open(options) before "
            + "compute, and do not use it after close");
      }
      List<float[]> out = new ArrayList<>(rows.size());
      for (Row row : rows) {
        Object text = row.isNullAt(0) ? null : row.get(0);
        if (text == null) {
          out.add(null);
        } else if (text instanceof String s) {
          out.add(model.embed(s));
        } else {
          throw new IllegalArgumentException(NAME + " embeds text, got a "
              + text.getClass().getName() + "; its input column must be STRING");
        }
      }
      return out;
    } finally {
      lock.readLock().unlock();
    }
  }

  @Override
  public void close() throws Exception {
    lock.writeLock().lock();
    try {
      if (model != null) {
        MiniLmModel m = model;
        model = null;
        m.close();
      }
    } finally {
      lock.writeLock().unlock();
    }
  }
}
