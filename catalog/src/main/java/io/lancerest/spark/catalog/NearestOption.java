package io.lancerest.spark.catalog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;

/**
 * lance-spark's {@code nearest} read option, refused: lance-spark 0.4.0 runs it per fragment
 * and a catalog read returns every row, unordered and without {@code _distance}. The refusal
 * shows the {@code vector_search} call that does what the option asked.
 */
final class NearestOption {
  private static final ObjectMapper JSON = new ObjectMapper();

  private NearestOption() {}

  static UnsupportedOperationException refused(String table, String json) {
    return new UnsupportedOperationException("Read option 'nearest' on table " + table
        + " is not supported: it would return every row, unordered and without _distance. "
        + "Search with the vector_search table function of the SQL extensions "
        + "(spark.sql.extensions = io.lancerest.spark.LanceRestSparkExtensions) instead: "
        + "SELECT * FROM " + call(table, json) + " (docs/search.md).");
  }

  /** The {@code vector_search} call of the option's JSON, placeholders for what it lacks. */
  private static String call(String table, String json) {
    String column = "<vector column>";
    String key = "array(...)";
    String k = "10";
    try {
      JsonNode n = JSON.readTree(json);
      if (n != null && n.hasNonNull("column")) {
        column = n.get("column").asText();
      }
      if (n != null && n.has("key") && n.get("key").isArray()) {
        List<String> values = new ArrayList<>();
        n.get("key").forEach(v -> values.add(v.asText()));
        key = "array(" + String.join(", ", values) + ")";
      }
      if (n != null && n.hasNonNull("k")) {
        k = n.get("k").asText();
      }
    } catch (Exception unreadable) {
      // the placeholders stand
    }
    return "vector_search('" + table + "', '" + column + "', " + key + ", " + k + ")";
  }
}
