package io.lancerest.spark.connector.search;

import java.io.Serializable;
import java.util.List;
import java.util.Locale;
import org.lance.index.DistanceType;
import org.lance.ipc.FullTextQuery;
import org.lance.ipc.Query;
import org.lance.ipc.ScanOptions;

/**
 * A search checked against one version of a table ({@link SearchPlanner}): what lance-core runs,
 * and in words what it uses ({@link #explain()}), for EXPLAIN. Plain values, so that it travels to
 * the task that runs it.
 *
 * @param table the table's name, for messages
 * @param version the table version it was checked against and runs on
 * @param vector the vector search, or {@code null} for a full-text one
 * @param text the full-text search, or {@code null} for a vector one
 * @param explain what the search uses: the index and its type, or the exact scan
 */
public record SearchPlan(String table, long version, VectorSearchRequest vector,
    TextSearchRequest text, String explain) implements Serializable {
  /** The column a vector search adds: the distance to the query vector, smallest first. */
  public static final String DISTANCE = "_distance";
  /** The column a full-text search adds: the relevance score, largest first. */
  public static final String SCORE = "_score";

  public SearchPlan {
    if ((vector == null) == (text == null)) {
      throw new IllegalArgumentException("a search is a vector or a full-text one");
    }
  }

  /** {@link #DISTANCE} or {@link #SCORE}. */
  public String scoreColumn() {
    return vector != null ? DISTANCE : SCORE;
  }

  /** The lance-core scan of this search, returning {@code columns} and the score column. */
  public ScanOptions scanOptions(List<String> columns) {
    ScanOptions.Builder b = new ScanOptions.Builder().columns(columns);
    if (vector != null) {
      Query.Builder q = new Query.Builder().setColumn(vector.column()).setKey(vector.key())
          .setK(vector.k());
      if (vector.nprobes() != null) {
        q.setNprobes(vector.nprobes());
      }
      if (vector.refineFactor() != null) {
        q.setRefineFactor(vector.refineFactor());
      }
      if (vector.distanceType() != null) {
        q.setDistanceType(distanceType(vector.distanceType()));
      }
      return b.nearest(q.build()).build();
    }
    FullTextQuery q = text.columns().size() == 1
        ? FullTextQuery.match(text.query(), text.columns().get(0))
        : FullTextQuery.multiMatch(text.query(), text.columns());
    return b.fullTextQuery(q).limit(text.k()).build();
  }

  static DistanceType distanceType(String name) {
    return switch (name.toLowerCase(Locale.ROOT)) {
      case "l2", "euclidean" -> DistanceType.L2;
      case "cosine" -> DistanceType.Cosine;
      case "dot" -> DistanceType.Dot;
      case "hamming" -> DistanceType.Hamming;
      default -> throw new IllegalArgumentException("unknown distance type " + name);
    };
  }
}
