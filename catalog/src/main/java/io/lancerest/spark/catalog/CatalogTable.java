package io.lancerest.spark.catalog;

import java.util.Map;
import org.lance.spark.LanceDataset;
import org.lance.spark.LancePositionDeltaDataset;

/**
 * The connector's lance-spark table plus what the catalog knows about it: its name and the
 * properties Spark shows in {@code DESCRIBE TABLE EXTENDED} and {@code SHOW TBLPROPERTIES}
 * (lance-spark's own table reports none).
 *
 * <p>Everything else (scans, writes, DELETE / UPDATE / MERGE) is lance-spark's, built from the
 * very same read options, storage options and namespace connection as the connector's table.
 */
final class CatalogTable extends LancePositionDeltaDataset {
  private final transient String name;
  private final transient Map<String, String> properties;

  CatalogTable(LanceDataset base, boolean managedVersioning, String name,
      Map<String, String> properties) {
    super(base.readOptions(), base.schema(), base.getInitialStorageOptions(),
        base.getNamespaceImpl(), base.getNamespaceProperties(), managedVersioning,
        base.getFileFormatVersion());
    this.name = name;
    this.properties = Map.copyOf(properties);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Map<String, String> properties() {
    return properties;
  }
}
