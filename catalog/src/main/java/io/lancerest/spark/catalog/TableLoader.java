package io.lancerest.spark.catalog;

import io.lancerest.spark.connector.LanceTables;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.lance.Dataset;
import org.lance.spark.LanceDataset;

/**
 * Builds the Spark table of a described table, at its latest version or at the one {@code
 * VERSION AS OF} / {@code TIMESTAMP AS OF} names, with the properties Spark shows for it.
 */
final class TableLoader {
  private final DescribedTables described;
  private final String catalogName;

  TableLoader(DescribedTables described, String catalogName) {
    this.described = described;
    this.catalogName = catalogName;
  }

  /** The latest table; at most one DescribeTable while the cache entry lives. */
  Table load(List<String> id, String displayName) {
    DescribedTable e = described.describe(id);
    CatalogTable t = e.table;
    if (t == null) {
      t = build(e, null, displayName);
      e.table = t;
    }
    return t;
  }

  /** {@code VERSION AS OF}: a number is a version, anything else a tag. */
  Table loadAtVersion(List<String> id, String versionOrTag, String displayName) {
    DescribedTable e = described.describe(id);
    long v = LanceTables.resolveVersionOrTag(e.handle, versionOrTag);
    return build(e, v, displayName);
  }

  /** {@code TIMESTAMP AS OF}, given by Spark in microseconds since the epoch. */
  Table loadAtTimestamp(List<String> id, long micros, String displayName) {
    DescribedTable e = described.describe(id);
    long v = LanceTables.resolveTimestamp(e.handle,
        Instant.EPOCH.plus(micros, ChronoUnit.MICROS));
    return build(e, v, displayName);
  }

  private CatalogTable build(DescribedTable e, Long version, String displayName) {
    Table base = version == null
        ? LanceTables.loadTable(e.handle, catalogName)
        : LanceTables.loadTableAtVersion(e.handle, version, catalogName);
    Map<String, String> props = new LinkedHashMap<>();
    if (e.describe.getMetadata() != null) {
      props.putAll(e.describe.getMetadata());
    }
    if (e.describe.getProperties() != null) {
      props.putAll(e.describe.getProperties());
    }
    props.put(TableCatalog.PROP_LOCATION, e.describe.getLocation());
    props.put(TableCatalog.PROP_PROVIDER, TableProperties.PROVIDER_LANCE);
    if (e.handle.managedVersioning()) {
      props.put(TableProperties.MANAGED_VERSIONING, "true");
    }
    // The dataset config and version are read when Spark asks (DESCRIBE, SHOW TBLPROPERTIES):
    // writes go through lance-spark, not the catalog, so anything read at load time goes stale.
    MaterializedViewLayout view = MaterializedViewLayout.of(base.schema(), () -> {
      try (Dataset ds = e.open(version)) {
        return ds.getSchema().getCustomMetadata();
      } catch (RuntimeException unreadable) {
        // No dataset to read (e.g. a declared table without data yet): no view metadata either;
        // the write itself reports what is wrong with the table.
        return Map.of();
      }
    });
    return new CatalogTable((LanceDataset) base, e.handle.managedVersioning(), displayName,
        props, () -> datasetProperties(e, version, props), e.handle, version, view);
  }

  private static Map<String, String> datasetProperties(DescribedTable e, Long version,
      Map<String, String> serverProps) {
    Map<String, String> out = new LinkedHashMap<>();
    try (Dataset ds = e.open(version)) {
      TableProperties.fromDatasetConfig(ds.getConfig()).forEach((k, v) -> {
        // What the server keeps wins over the dataset config.
        if (!serverProps.containsKey(k)) {
          out.put(k, v);
        }
      });
      out.put(TableProperties.CURRENT_VERSION, Long.toString(ds.version()));
    }
    return out;
  }
}
