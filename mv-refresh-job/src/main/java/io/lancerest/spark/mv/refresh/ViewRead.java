package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.layout.GenevaLayout;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The view table as one refresh attempt reads it, once, for the driver's rules and the kind's
 * plan: the version the attempt commits on top of, the schema (with the view's state in its
 * metadata), the config and the row count.
 *
 * @param version the view table's version this attempt read
 * @param schema its Arrow schema, metadata included
 * @param config its dataset config (the chunker's processed parents, among others)
 * @param rows its live rows
 */
public record ViewRead(long version, Schema schema, Map<String, String> config, long rows) {
  public ViewRead {
    config = config == null ? Map.of() : Map.copyOf(config);
  }

  /** The view's schema metadata; empty when it has none. */
  public Map<String, String> schemaMetadata() {
    return schema.getCustomMetadata() == null ? Map.of() : schema.getCustomMetadata();
  }

  /** What the attempt needs of the view table, opened at its latest version. */
  static ViewRead of(String viewName, org.lance.Dataset view) {
    try {
      return new ViewRead(view.version(), view.getSchema(), view.getConfig(), view.countRows());
    } catch (RuntimeException e) {
      throw new MaterializedViewException("Cannot read the table of view " + viewName + " at '"
          + view.uri() + "': " + e.getMessage(), e);
    }
  }

  /**
   * The source version the view reflects, as every kind's commit records it: the watermark on
   * {@code __source_row_id} (query and chunker views), else the base table version (every
   * kind); 0 before the first refresh, or when the base version is unreadable (the view is then
   * rebuilt).
   */
  long watermark(String viewName) {
    String w = null;
    for (Field f : schema.getFields()) {
      if (f.getName().equals(GenevaLayout.SOURCE_ROW_ID) && f.getMetadata() != null) {
        w = f.getMetadata().get(GenevaLayout.WATERMARK);
      }
    }
    if (w != null && !w.isBlank()) {
      try {
        return Long.parseLong(w.trim());
      } catch (NumberFormatException e) {
        throw new MaterializedViewException("View " + viewName + " has an unreadable watermark '"
            + w + "' (" + GenevaLayout.WATERMARK + ")");
      }
    }
    String base = schemaMetadata().get(GenevaLayout.BASE_TABLE_VERSION);
    try {
      return base == null ? 0 : Long.parseLong(base.trim());
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
