package io.lancerest.spark.mv.definition;

import io.lancerest.spark.connector.LanceLocation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the source table a view was refreshed from from another table later created under the
 * same name. A view stores its source's location and a version watermark, and a table dropped
 * and created again restarts its versions at 1, so version numbers and row ids alone would
 * read the new table as the old one (a chunker view would keep chunks of old rows whose row ids
 * new rows reuse; a UDTF view at the same version number would look up to date). Every refresh
 * commit records when the source version it reflects was written ({@value #KEY}, view schema
 * metadata); the next refresh compares it with the write time of that version of the source,
 * and over a replaced source rebuilds the view in full (the refresh driver's rule, the same for
 * every kind).
 */
public final class SourceIdentity {
  private static final Logger LOG = LoggerFactory.getLogger(SourceIdentity.class);

  /** View schema metadata: when the source version the view reflects was written. */
  public static final String KEY = "lancerest::view::source_version_time";

  private SourceIdentity() {}

  /** When the dataset's current version was written, as an ISO-8601 instant. */
  public static String versionTime(org.lance.Dataset ds) {
    return ds.getVersion().getDataTime().toInstant().toString();
  }

  /** What a view recorded, or {@code null} (refreshed before this was recorded, or never). */
  public static String recorded(Map<String, String> viewSchemaMetadata) {
    return viewSchemaMetadata == null ? null : viewSchemaMetadata.get(KEY);
  }

  /**
   * The reason the source is not the table the view reflects, or {@code null} when it is, or
   * when that cannot be told: nothing recorded (no refresh since this was recorded), or the
   * version still exists in neither table's history ({@code latest} at or past it, but it
   * cannot be opened: cleaned up).
   *
   * @param watermark the source version the view reflects
   * @param latest the source's latest version, read after the view's watermark: a watermark
   *     past it is then no version of this table (read before, it may be one committed since)
   * @param watermarkWritten when version {@code watermark} of the source now at {@code source}
   *     was written ({@link #versionTime}), {@code null} when it cannot be opened or does not
   *     exist
   */
  public static String replaced(String viewName, LanceLocation source,
      Map<String, String> viewSchemaMetadata, long watermark, long latest,
      String watermarkWritten) {
    String recorded = recorded(viewSchemaMetadata);
    if (recorded == null || watermark == 0) {
      return null;
    }
    String now = null;
    if (watermark <= latest) {
      now = watermarkWritten;
      if (now == null) {
        LOG.info("View {}: source version {} cannot be opened to check it is the same table",
            viewName, watermark);
        return null;
      }
    }
    if (recorded.equals(now)) {
      return null;
    }
    return "The source table of view " + viewName + " was replaced since the view's last "
        + "refresh: the view reflects source version " + watermark + " written at " + recorded
        + ", but that version of the table at '" + source.uri() + "' "
        + (now == null ? "does not exist" : "was written at " + now);
  }

  /**
   * {@code fields} without the engine's own field metadata ({@code geneva::} and {@code
   * lancerest::} keys, at every depth): a source that is itself a view keeps its watermark
   * there, which changes at every one of its refreshes. Other metadata (encodings, extension
   * types) stays: it can change what a scan returns.
   */
  public static List<Field> columnsOnly(List<Field> fields) {
    List<Field> out = new ArrayList<>(fields.size());
    for (Field f : fields) {
      java.util.Map<String, String> kept = new java.util.TreeMap<>();
      f.getMetadata().forEach((k, v) -> {
        if (!k.startsWith("geneva::") && !k.startsWith("lancerest::")) {
          kept.put(k, v);
        }
      });
      out.add(new Field(f.getName(), new FieldType(f.isNullable(), f.getType(),
          f.getDictionary(), kept.isEmpty() ? null : kept), columnsOnly(f.getChildren())));
    }
    return out;
  }
}
