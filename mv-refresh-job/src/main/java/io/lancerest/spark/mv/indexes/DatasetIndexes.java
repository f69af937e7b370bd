package io.lancerest.spark.mv.indexes;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.index.Index;
import org.lance.index.IndexType;
import org.lance.schema.LanceField;

/**
 * Reads the indexes of an open Lance dataset (the version it was opened at), one {@link
 * IndexSummary} per index name, from its manifest alone.
 *
 * <p>The manifest's index list ({@code getIndexes()}) has one entry per segment with the
 * fragments it covers; the dataset's fragments give the live rows of each. Nothing of an index's
 * files is read: lance-core's {@code getIndexStatistics} opens every segment (for an IVF index it
 * returns every centroid of every segment, for a full-text one it loads token data), and may
 * migrate an old index, a commit that a read-only statement must not make. {@code
 * describeIndices()} is not used either: lance-core 4.0.0 fails it on any table with a vector
 * index ("No scalar index plugin found for name 'vector'").
 */
public final class DatasetIndexes {
  /**
   * Config key prefix under which a view keeps how its engine built an index ({@code
   * <prefix><index name>}: a JSON object whose {@code method} is e.g. {@code ivf_pq}): the only
   * place that names the IVF method without opening the index.
   */
  public static final String RECIPE_KEY_PREFIX = "lancerest::view::index_recipe::";

  private DatasetIndexes() {}

  /**
   * The user-made indexes of {@code ds}, in the order of their first segment in the manifest.
   * lance-core's own bookkeeping entries (fragment reuse, MemWAL) are left out.
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
    // live rows (physical rows less deleted ones) of each fragment of this version
    Map<Integer, Long> liveRows = new LinkedHashMap<>();
    for (Fragment f : ds.getFragments()) {
      liveRows.put(f.getId(), f.metadata().getNumRows());
    }
    Map<String, String> config = ds.getConfig();
    Map<Integer, String> columnNames = new HashMap<>();
    names(ds.getLanceSchema().fields(), "", columnNames);
    List<IndexSummary> out = new ArrayList<>();
    for (Map.Entry<String, List<Index>> e : segments.entrySet()) {
      Index first = e.getValue().get(0);
      // A segment's bitmap may still name fragments that are no longer in the table (lance masks
      // them); only the table's own fragments count.
      Set<Integer> covered = new TreeSet<>();
      for (Index segment : e.getValue()) {
        covered.addAll(segment.fragments().orElse(List.copyOf(liveRows.keySet())));
      }
      covered.retainAll(liveRows.keySet());
      long fragmentsIndexed = 0;
      long rowsIndexed = 0;
      long rowsUnindexed = 0;
      for (Map.Entry<Integer, Long> f : liveRows.entrySet()) {
        if (covered.contains(f.getKey())) {
          fragmentsIndexed++;
          rowsIndexed += f.getValue();
        } else {
          rowsUnindexed += f.getValue();
        }
      }
      List<String> columns = new ArrayList<>();
      for (Integer field : first.fields()) {
        columns.add(columnNames.getOrDefault(field, "field " + field));
      }
      out.add(new IndexSummary(e.getKey(), type(ds, config, first), columns, fragmentsIndexed, rowsIndexed,
          liveRows.size() - fragmentsIndexed, rowsUnindexed, e.getValue().size()));
    }
    return out;
  }

  /**
   * lance-core's type in lower case. Every IVF index is {@code vector} in the manifest: its
   * details there do not say which method built it, so a view's recorded recipe names it when
   * there is one. lance-core 4.0.0 gives no type for some indexes (those lance-spark builds among
   * them); their details name it then, and when they are absent too, the index's own statistics
   * do (read for such an index only: these are btree and full-text indexes, whose statistics
   * are small, as lance-spark's own SHOW INDEXES reads them).
   */
  private static String type(Dataset ds, Map<String, String> config, Index index) {
    if (index.indexType() != null) {
      String type = index.indexType().name().toLowerCase(Locale.ROOT);
      String method = type.equals("vector") ? recipeMethod(config.get(RECIPE_KEY_PREFIX
          + index.name())) : null;
      return method != null ? method : type;
    }
    String url = detailsType(index.indexDetails().orElse(new byte[0]));
    if (url == null) {
      return statisticsType(ds, index.name());
    }
    String name = url.substring(url.lastIndexOf('.') + 1);
    if (name.endsWith("IndexDetails")) {
      name = name.substring(0, name.length() - "IndexDetails".length());
    }
    return name.isEmpty() ? "unknown" : name.toLowerCase(Locale.ROOT);
  }

  /** The {@code method} of a recorded recipe, or {@code null} (none, or not readable). */
  private static String recipeMethod(String recipe) {
    if (recipe == null) {
      return null;
    }
    try {
      String m = new com.fasterxml.jackson.databind.ObjectMapper().readTree(recipe)
          .path("method").asText("");
      return m.isEmpty() ? null : m.toLowerCase(Locale.ROOT);
    } catch (java.io.IOException e) {
      return null;
    }
  }

  /** The {@code index_type} lance-core's statistics give for index {@code name}, else unknown. */
  private static String statisticsType(Dataset ds, String name) {
    try {
      Object t = ds.getIndexStatistics(name).get("index_type");
      return t == null ? "unknown" : t.toString().toLowerCase(Locale.ROOT);
    } catch (RuntimeException e) { // lance-core's errors arrive unchecked
      return "unknown";
    }
  }

  /**
   * The type URL of index details stored as a protobuf {@code Any} ({@code
   * /lance.table.BTreeIndexDetails}): its field 1, a length-prefixed string; null if absent.
   */
  private static String detailsType(byte[] any) {
    if (any.length < 2 || any[0] != 0x0a) {
      return null;
    }
    int length = 0;
    int shift = 0;
    int i = 1;
    while (i < any.length && shift < 32) {
      byte b = any[i++];
      length |= (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return length >= 0 && i + length <= any.length
            ? new String(any, i, length, java.nio.charset.StandardCharsets.UTF_8) : null;
      }
      shift += 7;
    }
    return null;
  }

  /** Field id to column name, nested fields as {@code parent.child}. */
  private static void names(List<LanceField> fields, String prefix, Map<Integer, String> out) {
    for (LanceField f : fields) {
      out.put(f.getId(), prefix + f.getName());
      names(f.getChildren(), prefix + f.getName() + ".", out);
    }
  }
}
