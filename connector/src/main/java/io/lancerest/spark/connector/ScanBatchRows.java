package io.lancerest.spark.connector;

import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Rows per batch of a catalog table's scans. lance-spark reads 8,192 rows a batch; a scan hands
 * each batch across JNI and into Spark's column vectors, so a table of narrow rows scans faster
 * with larger batches (a 5M-row {@code GROUP BY} over four columns took 4-9 % less time with
 * 65,536, in CatalogBenchmark). A batch of wide rows would take far more memory, so the batch
 * is sized by what a row takes in the table's files (its manifest's file size over its rows):
 * about {@value #TARGET_BATCH_BYTES} bytes of files a batch, never fewer rows than lance-spark's
 * 8,192 nor more than 65,536. Tables with vectors, binary or nested columns, and empty ones,
 * keep lance-spark's 8,192.
 */
public final class ScanBatchRows {
  /** lance-spark's own batch size, kept for every other table. */
  public static final int DEFAULT = 8192;
  /** The batch of a table of narrow rows. */
  public static final int NARROW = 65536;
  static final int NARROW_ROW_BYTES = 256;
  /** Bytes of the table's files one batch may cover. */
  static final long TARGET_BATCH_BYTES = 4L << 20;

  private ScanBatchRows() {}

  /** Rows per batch for scans of {@code ds} (its latest version as opened). */
  public static int forDataset(org.lance.Dataset ds) {
    if (forSchema(ds.getSchema()) == DEFAULT) {
      return DEFAULT;
    }
    org.lance.ManifestSummary m = ds.getVersion().getManifestSummary();
    return forSize(m.getTotalFilesSize(), m.getTotalDataFileRows());
  }

  /** Rows per batch for a table of {@code rows} physical rows in {@code bytes} of files. */
  static int forSize(long bytes, long rows) {
    if (bytes <= 0 || rows <= 0) {
      return DEFAULT;
    }
    long perRow = Math.max(1, bytes / rows);
    return (int) Math.max(DEFAULT, Math.min(NARROW, TARGET_BATCH_BYTES / perRow));
  }

  /**
   * Whether {@code schema}'s columns allow a batch larger than lance-spark's: {@link #NARROW}
   * when they are all fixed-width values or strings, about {@value #NARROW_ROW_BYTES} bytes a
   * row or less as Spark sizes them, else {@link #DEFAULT}.
   */
  public static int forSchema(Schema schema) {
    long bytes = 0;
    for (Field f : schema.getFields()) {
      Integer width = width(f);
      if (width == null) {
        return DEFAULT;
      }
      bytes += width;
    }
    return bytes <= NARROW_ROW_BYTES ? NARROW : DEFAULT;
  }

  /** Bytes of one value as Spark estimates them, or {@code null} for a wide or nested type. */
  private static Integer width(Field f) {
    ArrowType t = f.getType();
    if (t instanceof ArrowType.Int i) {
      return i.getBitWidth() / 8;
    }
    if (t instanceof ArrowType.FloatingPoint || t instanceof ArrowType.Date
        || t instanceof ArrowType.Timestamp || t instanceof ArrowType.Time) {
      return 8;
    }
    if (t instanceof ArrowType.Bool) {
      return 1;
    }
    if (t instanceof ArrowType.Decimal) {
      return 16;
    }
    if (t instanceof ArrowType.Utf8 || t instanceof ArrowType.LargeUtf8) {
      return 20; // Spark's default size of a string
    }
    return null;
  }
}
