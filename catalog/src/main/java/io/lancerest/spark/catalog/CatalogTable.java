package io.lancerest.spark.catalog;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.lance.spark.LanceDataset;
import org.lance.spark.LancePositionDeltaDataset;
import org.lance.spark.read.LanceScanBuilder;

/**
 * The connector's lance-spark table plus what the catalog knows about it: its name and the
 * properties Spark shows in {@code DESCRIBE TABLE EXTENDED} and {@code SHOW TBLPROPERTIES}
 * (lance-spark's own table reports none).
 *
 * <p>Everything else (scans, writes, DELETE / UPDATE / MERGE) is lance-spark's, built from the
 * very same read options, storage options and namespace connection as the connector's table;
 * scans only learn to report a manifest-answered {@code COUNT(*)} as complete
 * ({@link CompleteCountScanBuilder}).
 */
final class CatalogTable extends LancePositionDeltaDataset {
  private final transient String name;
  private final transient Map<String, String> properties;
  private final transient Supplier<Map<String, String>> live;

  /**
   * @param live properties read at each call (the current version of a table read at "latest"
   *     changes with every write, which never passes through the catalog)
   */
  CatalogTable(LanceDataset base, boolean managedVersioning, String name,
      Map<String, String> properties, Supplier<Map<String, String>> live) {
    super(base.readOptions(), base.schema(), base.getInitialStorageOptions(),
        base.getNamespaceImpl(), base.getNamespaceProperties(), managedVersioning,
        base.getFileFormatVersion());
    this.name = name;
    this.properties = Map.copyOf(properties);
    this.live = live;
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    ScanBuilder b = super.newScanBuilder(options);
    return b instanceof LanceScanBuilder lance ? new CompleteCountScanBuilder(lance) : b;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Map<String, String> properties() {
    if (live == null) {
      return properties;
    }
    Map<String, String> all = new LinkedHashMap<>(properties);
    all.putAll(live.get());
    return all;
  }
}
