package io.lancerest.spark.computed;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The knobs of one backfill.
 *
 * @param batchSize rows per call of the function (default 256)
 * @param commitGranularity fragments per commit, each commit also recording them as done
 *     (default 16: a killed backfill loses at most that many fragments' work, and a table of a
 *     few hundred fragments still commits a few dozen times, not once per fragment)
 * @param readVersion the table version whose fragments are computed, or {@code null} for latest
 * @param errorHandling what a throwing function does to its batch
 * @param retries {@code retry} only: attempts after the first before failing
 * @param where a Spark SQL condition over the table's columns: only matching rows are computed,
 *     or {@code null}
 */
public record BackfillOptions(int batchSize, int commitGranularity, Long readVersion,
    ErrorMode errorHandling, int retries, String where) implements java.io.Serializable {
  /** What a batch whose function call throws does. */
  public enum ErrorMode {
    /** The backfill fails, naming table, column and cause; committed fragments stay. */
    FAIL,
    /** The batch's rows stay NULL and are counted. */
    SKIP,
    /** The batch is called again up to {@code retries} times, then the backfill fails. */
    RETRY
  }

  public static final List<String> KEYS = List.of("batch_size", "commit_granularity",
      "read_version", "error_handling", "retries", "where");

  public static BackfillOptions defaults() {
    return new BackfillOptions(256, 16, null, ErrorMode.FAIL, 3, null);
  }

  /** A copy with {@code where}. */
  public BackfillOptions withWhere(String condition) {
    return new BackfillOptions(batchSize, commitGranularity, readVersion, errorHandling, retries,
        condition);
  }

  /**
   * Options from {@code key = value} pairs ({@link #KEYS}); unknown keys and bad values are
   * refused naming table and column.
   */
  public static BackfillOptions parse(String table, String column, Map<String, String> raw) {
    String where = "Backfill of column '" + column + "' of table " + table;
    BackfillOptions d = defaults();
    Map<String, String> m = new LinkedHashMap<>();
    raw.forEach((k, v) -> m.put(k.toLowerCase(Locale.ROOT), v));
    for (String k : m.keySet()) {
      if (!KEYS.contains(k)) {
        throw new ComputedColumnException(where + ": unknown option '" + k + "'. Known options: "
            + String.join(", ", KEYS) + ".");
      }
    }
    int batch = positive(where, m, "batch_size", d.batchSize());
    int gran = positive(where, m, "commit_granularity", d.commitGranularity());
    int retries = m.containsKey("retries") ? positive(where, m, "retries", 3) : d.retries();
    Long version = null;
    if (m.get("read_version") != null) {
      version = (long) positive(where, m, "read_version", 1);
    }
    ErrorMode mode = d.errorHandling();
    if (m.get("error_handling") != null) {
      try {
        mode = ErrorMode.valueOf(m.get("error_handling").trim().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new ComputedColumnException(where + ": error_handling '" + m.get("error_handling")
            + "' is not one of fail, skip, retry.");
      }
    }
    String cond = m.get("where");
    return new BackfillOptions(batch, gran, version, mode, retries,
        cond == null || cond.isBlank() ? null : cond);
  }

  private static int positive(String where, Map<String, String> m, String key, int dflt) {
    String v = m.get(key);
    if (v == null) {
      return dflt;
    }
    try {
      int n = Integer.parseInt(v.trim());
      if (n > 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw new ComputedColumnException(where + ": option " + key + " = '" + v + "' must be a "
        + "positive whole number.");
  }
}
