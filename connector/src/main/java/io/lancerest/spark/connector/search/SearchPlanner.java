package io.lancerest.spark.connector.search;

import io.lancerest.spark.connector.read.FragmentHazard;
import io.lancerest.spark.connector.read.TableFragments;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.lance.Dataset;
import org.lance.index.Index;
import org.lance.index.IndexType;
import org.lance.schema.LanceField;

/**
 * Checks a search against a dataset's schema, indexes and fragments, and says what it will use.
 * Every refusal is a {@link SearchException} naming the table and the column, saying what to do.
 */
public final class SearchPlanner {
  private final Dataset ds;
  private final String table;
  /**
   * Each index's statistics, fetched once per planning and only for indexes on a column the
   * search reads: each fetch reads the index from the store (costly on S3), and an unrelated
   * index whose statistics fail must not break the search.
   */
  private final Map<String, Map<String, Object>> statistics = new LinkedHashMap<>();

  private SearchPlanner(Dataset ds, String table) {
    this.ds = ds;
    this.table = table;
  }

  /** A planner for {@code ds}, named {@code table} in messages. */
  public static SearchPlanner of(Dataset ds, String table) {
    return new SearchPlanner(ds, table);
  }

  /** The nearest-neighbour search {@code r} on this dataset's version. */
  public SearchPlan vector(VectorSearchRequest r) {
    requireK(r.k());
    LanceField field = r.column() == null ? onlyVectorColumn() : column(r.column());
    int dimension = vectorDimension(field);
    if (r.key().length != dimension) {
      throw new SearchException("vector_search on " + table + ": the query vector has "
          + r.key().length + " values, but column '" + field.getName() + "' holds vectors of "
          + dimension + ". Pass a query vector of " + dimension + " values.");
    }
    if ("hamming".equals(r.distanceType())) {
      throw new SearchException("vector_search on " + table + ": distance_type 'hamming' is for "
          + "binary vectors, and column '" + field.getName() + "' holds floats; use one of "
          + String.join(", ", VectorSearchRequest.DISTANCE_TYPES) + ".");
    }
    if (r.distanceType() != null && !VectorSearchRequest.DISTANCE_TYPES.contains(
        r.distanceType())) {
      throw new SearchException("vector_search on " + table + ": unknown distance_type '"
          + r.distanceType() + "'; use one of " + String.join(", ",
          VectorSearchRequest.DISTANCE_TYPES) + ".");
    }
    requirePositive("nprobes", r.nprobes());
    requirePositive("refine_factor", r.refineFactor());
    requireLinearScan();
    VectorSearchRequest resolved = new VectorSearchRequest(field.getName(), r.key(), r.k(),
        r.nprobes(), r.refineFactor(), r.distanceType());
    String what = "vector search of column " + field.getName() + " for k=" + r.k();
    List<String> indexes = indexesOn(field, true);
    if (indexes.isEmpty()) {
      // an exact scan has exact distances: lance-core ignores a refine factor there, and so
      // does the plan (no candidates re-ranked, none fetched for it)
      VectorSearchRequest exact = new VectorSearchRequest(field.getName(), r.key(), r.k(),
          r.nprobes(), null, r.distanceType());
      return new SearchPlan(table, ds.version(), exact, null, what + " ("
          + (r.distanceType() == null ? "l2" : r.distanceType()) + "): no index on column "
          + field.getName() + ": exact scan of " + ds.countRows() + " rows"
          + (r.refineFactor() == null ? "" : " (refine_factor not needed: distances are "
              + "exact)"));
    }
    String name = indexes.get(0);
    Map<String, Object> stats = statistics(name);
    Map<?, ?> first = firstSegment(stats);
    String metric = String.valueOf(first.get("metric_type"));
    if (r.distanceType() != null && !PlanWords.sameMetric(r.distanceType(), metric)) {
      throw new SearchException("vector_search on " + table + ": index " + name + " on column "
          + field.getName() + " measures " + metric + " distances, but the search asks for "
          + r.distanceType() + ". Search without distance_type (or with '" + metric
          + "'), or build the index with metric = '" + r.distanceType() + "'.");
    }
    Object partitions = first.get("num_partitions");
    String probes = r.nprobes() == null ? "" : ", nprobes " + r.nprobes();
    String refine = r.refineFactor() == null ? "" : ", refine_factor " + r.refineFactor();
    return new SearchPlan(table, ds.version(), resolved, null, what + " (" + metric + "): index "
        + name + " (" + stats.get("index_type") + ", " + partitions + " partitions" + probes
        + refine + ")" + PlanWords.unindexed(stats, "searched exactly"));
  }

  /** The full-text search {@code r} on this dataset's version. */
  public SearchPlan text(TextSearchRequest r) {
    requireK(r.k());
    if (r.query() == null || r.query().isBlank()) {
      throw new SearchException("search on " + table + ": the query is empty; pass the words to "
          + "look for.");
    }
    List<LanceField> fields = new ArrayList<>();
    if (r.columns().isEmpty()) {
      fields.add(onlyTextIndexedColumn());
    } else {
      for (String c : r.columns()) {
        fields.add(column(c));
      }
    }
    List<String> names = new ArrayList<>();
    List<String> used = new ArrayList<>();
    for (LanceField f : fields) {
      List<String> on = indexesOn(f, false);
      if (on.isEmpty()) {
        throw new SearchException("search on " + table + ": column '" + f.getName()
            + "' has no full-text index, and lance-core searches text only through one. "
            + "Create it: ALTER TABLE " + table + " CREATE INDEX " + f.getName() + "_fts USING "
            + "fts (" + f.getName() + ") WITH (" + PlanWords.FTS_OPTIONS + ").");
      }
      names.add(f.getName());
      Map<String, Object> stats = statistics(on.get(0));
      used.add(on.get(0) + " (" + stats.get("index_type") + ")"
          + PlanWords.unindexed(stats, "matched without it"));
    }
    requireLinearScan();
    return new SearchPlan(table, ds.version(), null,
        new TextSearchRequest(r.query(), names, r.k()),
        "full-text search of column" + (names.size() > 1 ? "s " : " ") + String.join(", ", names)
            + " for k=" + r.k() + ": index " + String.join("; index ", used));
  }

  private void requireK(int k) {
    if (k < 1) {
      throw new SearchException("Search on " + table + ": k (the number of rows to return) must "
          + "be at least 1, got " + k + ".");
    }
  }

  private void requirePositive(String option, Integer value) {
    if (value != null && value < 1) {
      throw new SearchException("vector_search on " + table + ": " + option + " must be at "
          + "least 1, got " + value + ".");
    }
  }

  /**
   * Refuses a table with fragments a compaction rewrote: lance-core 4.0.0 computes every row id
   * of such a fragment for a search, in time quadratic in its rows
   * (docs/lance-core-scan-defect.md). A fragment with deletions costs time in proportion to k
   * times its rows, which {@link RowFetchBound} bounds once the columns read are known. {@code
   * _rowaddr}, the route of the table scans, is no option: lance-core 4.0.0 aborts the JVM when
   * an indexed search asks for it.
   */
  private void requireLinearScan() {
    TreeSet<Integer> rewritten = TableFragments.of(ds).with(FragmentHazard.REWRITTEN_ROW_IDS);
    if (!rewritten.isEmpty()) {
      throw new SearchException("Search on " + table + " refused: fragments " + rewritten
          + " were rewritten by a compaction that dropped deleted rows, and lance-core 4.0.0 "
          + "needs time quadratic in a fragment's rows to search such a fragment (hours for a "
          + "million rows; docs/lance-core-scan-defect.md). To give it plain row ids: a table, "
          + "recreate it (CREATE TABLE ... AS SELECT); a materialized view, REFRESH MATERIALIZED "
          + "VIEW ... WITH (force = true), and compact it with OPTIMIZE MATERIALIZED VIEW, not "
          + "lance-spark's OPTIMIZE.");
    }
  }

  private LanceField column(String name) {
    List<LanceField> all = ds.getLanceSchema().fields();
    for (LanceField f : all) {
      if (f.getName().equals(name)) {
        return f;
      }
    }
    List<LanceField> folded = all.stream().filter(f -> f.getName().equalsIgnoreCase(name))
        .toList();
    if (folded.size() == 1) {
      return folded.get(0);
    }
    throw new SearchException("Search on " + table + ": no column '" + name + "'; its columns "
        + "are " + all.stream().map(LanceField::getName).filter(n -> !n.startsWith("_"))
        .collect(Collectors.joining(", ")) + ".");
  }

  private LanceField onlyVectorColumn() {
    List<LanceField> vectors = ds.getLanceSchema().fields().stream()
        .filter(f -> f.getType() instanceof ArrowType.FixedSizeList).toList();
    if (vectors.size() == 1) {
      return vectors.get(0);
    }
    throw new SearchException("vector_search on " + table + ": "
        + (vectors.isEmpty() ? "the table has no vector column (a fixed-size list of floats). "
            + "Declare one with TBLPROPERTIES ('<column>.arrow.fixed-size-list.size' = "
            + "'<dimension>') on an ARRAY<FLOAT> column."
            : "name the vector column, one of " + vectors.stream().map(LanceField::getName)
                .collect(Collectors.joining(", ")) + ": vector_search('" + table + "', '"
                + vectors.get(0).getName() + "', array(...), k)."));
  }

  private LanceField onlyTextIndexedColumn() {
    Map<Integer, LanceField> byId = new LinkedHashMap<>();
    ds.getLanceSchema().fields().forEach(f -> byId.put(f.getId(), f));
    TreeSet<String> indexed = new TreeSet<>();
    for (Index i : ds.getIndexes()) {
      // a full-text index is on one string column: only those indexes' statistics are read
      if (i.fields().size() == 1 && byId.containsKey(i.fields().get(0))
          && isString(byId.get(i.fields().get(0))) && isText(i)) {
        indexed.add(byId.get(i.fields().get(0)).getName());
      }
    }
    if (indexed.size() == 1) {
      return column(indexed.first());
    }
    throw new SearchException("search on " + table + ": " + (indexed.isEmpty()
        ? "the table has no full-text index, and lance-core searches text only through one. "
            + "Create it: ALTER TABLE " + table + " CREATE INDEX <name> USING fts (<column>) "
            + "WITH (" + PlanWords.FTS_OPTIONS + ")."
        : "name the column to search, one of " + String.join(", ", indexed)
            + ": search('" + table + "', 'words', k, search_columns => array('" + indexed.first()
            + "'))."));
  }

  /** The fixed size of a vector column; refuses any other column. */
  private int vectorDimension(LanceField f) {
    ArrowType t = f.getType();
    // the Arrow field has the list's item (lance-core's field of a fixed-size list has none)
    List<org.apache.arrow.vector.types.pojo.Field> items = ds.getSchema()
        .findField(f.getName()).getChildren();
    ArrowType item = items.isEmpty() ? null : items.get(0).getType();
    boolean floats = item instanceof ArrowType.FloatingPoint;
    if (t instanceof ArrowType.FixedSizeList fixed && floats) {
      return fixed.getListSize();
    }
    if ((t instanceof ArrowType.List || t instanceof ArrowType.LargeList) && floats) {
      throw new SearchException("vector_search on " + table + ": column '" + f.getName()
          + "' is ARRAY<FLOAT> without a fixed size, not a vector. Declare it as one when the "
          + "table is created: TBLPROPERTIES ('" + f.getName() + ".arrow.fixed-size-list.size' "
          + "= '<dimension>') (docs/search.md).");
    }
    throw new SearchException("vector_search on " + table + ": column '" + f.getName()
        + "' is " + PlanWords.typeName(t) + ", not a vector (a fixed-size list of floats). "
        + "Search a vector column.");
  }

  /**
   * The names of the vector ({@code vector}) or full-text indexes on exactly {@code f}, in the
   * manifest's order, the order lance-core looks an index of a column up in: the first is the
   * one a search uses. Only indexes on {@code f} have their statistics read.
   */
  private List<String> indexesOn(LanceField f, boolean vector) {
    List<String> out = new ArrayList<>();
    for (Index i : ds.getIndexes()) {
      if (i.fields().equals(List.of(f.getId())) && !out.contains(i.name())
          && vector == PlanWords.isVector(kind(i)) && (vector || isText(i))) {
        out.add(i.name());
      }
    }
    return out;
  }

  private static boolean isString(LanceField f) {
    return f.getType() instanceof ArrowType.Utf8 || f.getType() instanceof ArrowType.LargeUtf8;
  }

  private Map<String, Object> statistics(String index) {
    return statistics.computeIfAbsent(index, ds::getIndexStatistics);
  }

  /**
   * An index's type as its statistics name it ({@code IVF_FLAT}, {@code Inverted}, ...):
   * lance-core leaves {@link Index#indexType()} empty for indexes lance-spark built.
   */
  private String kind(Index i) {
    Object t = statistics(i.name()).get("index_type");
    return t != null ? t.toString() : i.indexType() == null ? "" : i.indexType().name();
  }

  private boolean isText(Index i) {
    return kind(i).equalsIgnoreCase(IndexType.INVERTED.name());
  }

  private static Map<?, ?> firstSegment(Map<String, Object> stats) {
    Object indices = stats.get("indices");
    if (indices instanceof List<?> l && !l.isEmpty() && l.get(0) instanceof Map<?, ?> m) {
      return m;
    }
    return Map.of();
  }
}
