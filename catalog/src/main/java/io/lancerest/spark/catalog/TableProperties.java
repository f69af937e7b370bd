package io.lancerest.spark.catalog;

import io.lancerest.client.Identifiers;
import io.lancerest.spark.connector.LanceTables;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.TableCatalog;

/**
 * Which table properties users may set, how they are stored in a Lance dataset config when the
 * server cannot keep them, and what Spark is shown.
 */
final class TableProperties {
  /** Shown in DESCRIBE TABLE EXTENDED / SHOW TBLPROPERTIES: the version the table was read at. */
  static final String CURRENT_VERSION = "current-version";
  /** Shown: whether the namespace server manages the table's versions. */
  static final String MANAGED_VERSIONING = "managed-versioning";
  static final String PROVIDER_LANCE = "lance";

  /**
   * Keys the catalog computes or Spark owns; SET/UNSET TBLPROPERTIES on them is refused. Comment
   * is not among them ({@code COMMENT ON TABLE} sets it as a property), but the dataset config
   * key it is stored under is: that key only ever surfaces as Spark's {@code comment}.
   */
  static final Set<String> RESERVED = Set.of(
      TableCatalog.PROP_LOCATION, TableCatalog.PROP_PROVIDER, TableCatalog.PROP_OWNER,
      TableCatalog.PROP_EXTERNAL, TableCatalog.PROP_IS_MANAGED_LOCATION, CURRENT_VERSION,
      MANAGED_VERSIONING, "path", TableProperties.COMMENT_CONFIG_KEY);

  /** Fixed at creation: the dataset's row-id scheme and file format cannot change afterwards. */
  static final Set<String> CREATE_ONLY =
      Set.of(LanceTables.ENABLE_STABLE_ROW_IDS, LanceTables.FILE_FORMAT_VERSION);

  /**
   * The dataset config key that holds the table comment. The connector keeps Spark's own keys
   * (comment among them) out of the dataset config at creation, so the comment is stored under
   * a key of ours.
   */
  static final String COMMENT_CONFIG_KEY = "lance-rest.comment";

  /** Lance's own dataset config keys start with this; they are not user properties. */
  private static final String LANCE_INTERNAL_PREFIX = "lance.";
  /** lance-spark's per-write options ({@code option.*}); they are not table properties. */
  private static final String WRITE_OPTION_PREFIX = "option.";

  private TableProperties() {}

  /** True when a property name is reserved (case-insensitively, as Spark treats them). */
  static boolean isReserved(String key) {
    return RESERVED.contains(key.toLowerCase(Locale.ROOT));
  }

  /** The refusal of a statement that sets or removes reserved property {@code key}. */
  static IllegalArgumentException reserved(List<String> id, String key) {
    return new IllegalArgumentException("Table property '" + key + "' of "
        + Identifiers.display(id) + " is reserved: the catalog computes it, so it cannot be set "
        + "or removed. Reserved keys: " + new java.util.TreeSet<>(RESERVED));
  }

  /** A table's statement properties as dataset config; its location is no config. */
  static Map<String, String> datasetProps(Map<String, String> props) {
    Map<String, String> p = new LinkedHashMap<>(props);
    p.remove(TableCatalog.PROP_LOCATION);
    return toDatasetConfig(p);
  }

  /** Maps user properties to what is written into the dataset config. */
  static Map<String, String> toDatasetConfig(Map<String, String> userProps) {
    Map<String, String> out = new LinkedHashMap<>();
    userProps.forEach((k, v) -> {
      if (k.equals(TableCatalog.PROP_COMMENT)) {
        out.put(COMMENT_CONFIG_KEY, v);
      } else {
        out.put(k, v);
      }
    });
    return out;
  }

  /** The user properties kept in a dataset config (Lance's own {@code lance.*} keys left out). */
  static Map<String, String> fromDatasetConfig(Map<String, String> config) {
    Map<String, String> out = new LinkedHashMap<>();
    config.forEach((k, v) -> {
      if (k.equals(COMMENT_CONFIG_KEY)) {
        out.put(TableCatalog.PROP_COMMENT, v);
      } else if (!k.startsWith(LANCE_INTERNAL_PREFIX)) {
        out.put(k, v);
      }
    });
    return out;
  }

  /**
   * The dataset config after an RTAS: Lance's own {@code lance.*} keys of {@code current} kept,
   * every user key replaced by {@code userConfig} (already mapped by {@link #toDatasetConfig}).
   * Keys that only steer how the dataset is written never enter the config.
   */
  static Map<String, String> replacedDatasetConfig(Map<String, String> current,
      Map<String, String> userConfig) {
    Map<String, String> next = new LinkedHashMap<>();
    current.forEach((k, v) -> {
      if (k.startsWith(LANCE_INTERNAL_PREFIX)) {
        next.put(k, v);
      }
    });
    userConfig.forEach((k, v) -> {
      if (v != null && !LanceTables.SPARK_RESERVED_PROPERTIES.contains(k)
          && !k.startsWith(WRITE_OPTION_PREFIX) && !CREATE_ONLY.contains(k)) {
        next.put(k, v);
      }
    });
    return next;
  }

  /** Name of a dataset config key for {@code key}, as used by SET / UNSET. */
  static String datasetConfigKey(String key) {
    return key.equals(TableCatalog.PROP_COMMENT) ? COMMENT_CONFIG_KEY : key;
  }
}
