package io.lancerest.spark.connector.search;

import java.util.Locale;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.lance.index.IndexType;

/** The words {@link SearchPlanner} uses for lance-core's types, metrics and index statistics. */
final class PlanWords {
  /**
   * Every tokenizer option of a full-text index: lance-core 4.0.0 refuses an index that leaves
   * one out.
   */
  static final String FTS_OPTIONS = "base_tokenizer = 'simple', language = 'English', "
      + "max_token_length = 40, lower_case = true, stem = false, remove_stop_words = false, "
      + "ascii_folding = false, with_position = false";

  private PlanWords() {}

  /** Whether an index type (as its statistics name it) is a vector index. */
  static boolean isVector(String type) {
    String t = type.toUpperCase(Locale.ROOT);
    return t.equals(IndexType.VECTOR.name()) || t.startsWith("IVF_");
  }

  /** Whether a user's distance type names the metric lance-core reports for an index. */
  static boolean sameMetric(String asked, String indexMetric) {
    String m = indexMetric.toLowerCase(Locale.ROOT);
    return SearchPlan.distanceType(asked) == SearchPlan.distanceType(
        m.equals("euclidean") ? "l2" : m);
  }

  /** ", N rows not in the index {@code how}", or nothing when the index covers every row. */
  static String unindexed(Map<String, Object> stats, String how) {
    Object n = stats.get("num_unindexed_rows");
    long rows = n instanceof Number num ? num.longValue() : 0;
    return rows == 0 ? "" : ", " + rows + " rows not in the index " + how;
  }

  /** A column type as SQL shows it. */
  static String typeName(ArrowType t) {
    return switch (t.getTypeID()) {
      case Int -> ((ArrowType.Int) t).getBitWidth() == 64 ? "BIGINT"
          : ((ArrowType.Int) t).getBitWidth() == 32 ? "INT" : "an integer";
      case Utf8, LargeUtf8 -> "STRING";
      case FloatingPoint -> ((ArrowType.FloatingPoint) t).getPrecision().name().equals("DOUBLE")
          ? "DOUBLE" : "FLOAT";
      case Bool -> "BOOLEAN";
      case List, LargeList, FixedSizeList -> "an ARRAY of another type";
      default -> t.getTypeID().name();
    };
  }
}
