package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.layout.GenevaLayout;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The source version a view reflects, as every kind's commit records it: the watermark on
 * {@code __source_row_id} (query and chunker views) or the base table version (every kind), and
 * the view's schema metadata, which holds when that source version was written ({@link
 * io.lancerest.spark.mv.definition.SourceIdentity}).
 *
 * @param version 0 before the view's first refresh (or when the recorded base version is
 *     unreadable: the view is then rebuilt)
 */
record ViewWatermark(long version, Map<String, String> schemaMetadata) {
  /** Reads the view table's latest version. */
  static ViewWatermark read(String viewName, LanceLocation view) {
    Schema schema;
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = view.open(a, null)) {
      schema = ds.getSchema();
    } catch (RuntimeException e) {
      throw new MaterializedViewException("Cannot open the table of view " + viewName + " at '"
          + view.uri() + "': " + e.getMessage(), e);
    }
    Map<String, String> meta = schema.getCustomMetadata() == null ? Map.of()
        : schema.getCustomMetadata();
    String w = null;
    for (Field f : schema.getFields()) {
      if (f.getName().equals(GenevaLayout.SOURCE_ROW_ID) && f.getMetadata() != null) {
        w = f.getMetadata().get(GenevaLayout.WATERMARK);
      }
    }
    if (w != null && !w.isBlank()) {
      try {
        return new ViewWatermark(Long.parseLong(w.trim()), meta);
      } catch (NumberFormatException e) {
        throw new MaterializedViewException("View " + viewName + " has an unreadable watermark '"
            + w + "' (" + GenevaLayout.WATERMARK + ")");
      }
    }
    String base = meta.get(GenevaLayout.BASE_TABLE_VERSION);
    try {
      return new ViewWatermark(base == null ? 0 : Long.parseLong(base.trim()), meta);
    } catch (NumberFormatException e) {
      return new ViewWatermark(0, meta);
    }
  }
}
