package io.lancerest.spark.mv.indexes;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.lance.Dataset;
import org.lance.index.Index;
import org.lance.index.IndexType;
import org.lance.schema.LanceField;

/**
 * Reads the indexes of an open Lance dataset (the version it was opened at), one {@link
 * IndexSummary} per index name.
 *
 * <p>The manifest's index list ({@code getIndexes()}) has one entry per segment, and lance-core's
 * statistics ({@code getIndexStatistics}) give the type and row counts of every kind of index,
 * vector ones included. {@code describeIndices()} is not used: lance-core 4.0.0 fails it on any
 * table with a vector index ("No scalar index plugin found for name 'vector'").
 */
public final class DatasetIndexes {
  private DatasetIndexes() {}

  /**
   * The user-made indexes of {@code ds}, in the order of their first segment in the manifest.
   * lance-core's own bookkeeping entries (fragment reuse, MemWAL) are left out.
   *
   * @throws IllegalStateException lance-core cannot give an index's statistics (its message
   *     names the index)
   */
  public static List<IndexSummary> list(Dataset ds) {
    Map<String, List<Index>> segments = new LinkedHashMap<>();
    for (Index index : ds.getIndexes()) {
      if (index.indexType() == IndexType.FRAGMENT_REUSE || index.indexType() == IndexType.MEM_WAL) {
        continue;
      }
      segments.computeIfAbsent(index.name(), n -> new ArrayList<>()).add(index);
    }
    if (segments.isEmpty()) {
      return List.of();
    }
    Map<Integer, String> columnNames = new HashMap<>();
    names(ds.getLanceSchema().fields(), "", columnNames);
    List<IndexSummary> out = new ArrayList<>();
    for (Map.Entry<String, List<Index>> e : segments.entrySet()) {
      String name = e.getKey();
      Map<String, Object> stats;
      try {
        stats = ds.getIndexStatistics(name);
      } catch (RuntimeException failed) {
        throw new IllegalStateException("lance-core cannot read the statistics of index '" + name
            + "': " + failed.getMessage(), failed);
      }
      List<String> columns = new ArrayList<>();
      for (Integer field : e.getValue().get(0).fields()) {
        columns.add(columnNames.getOrDefault(field, "field " + field));
      }
      Object type = stats.get("index_type");
      out.add(new IndexSummary(name,
          type == null ? e.getValue().get(0).indexType().name().toLowerCase(Locale.ROOT)
              : type.toString().toLowerCase(Locale.ROOT),
          columns, count(stats, "num_indexed_fragments"), count(stats, "num_indexed_rows"),
          count(stats, "num_unindexed_fragments"), count(stats, "num_unindexed_rows"),
          e.getValue().size()));
    }
    return out;
  }

  /** Field id to column name, nested fields as {@code parent.child}. */
  private static void names(List<LanceField> fields, String prefix, Map<Integer, String> out) {
    for (LanceField f : fields) {
      out.put(f.getId(), prefix + f.getName());
      names(f.getChildren(), prefix + f.getName() + ".", out);
    }
  }

  private static long count(Map<String, Object> stats, String key) {
    if (stats.get(key) instanceof Number n) {
      return n.longValue();
    }
    throw new IllegalStateException("lance-core's statistics of index '" + stats.get("name")
        + "' have no " + key + ": " + stats.keySet());
  }
}
