package io.lancerest.spark.catalog;

import io.lancerest.spark.connector.TableHandle;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.lance.spark.LanceDataset;
import org.lance.spark.LancePositionDeltaDataset;
import org.lance.spark.LanceSparkReadOptions;
import org.lance.spark.read.LanceScanBuilder;

/**
 * The connector's lance-spark table plus what the catalog knows about it: its name and the
 * properties Spark shows in {@code DESCRIBE TABLE EXTENDED} and {@code SHOW TBLPROPERTIES}
 * (lance-spark's own table reports none).
 *
 * <p>Everything else (scans, writes, DELETE / UPDATE / MERGE) is lance-spark's, built from the
 * very same read options, storage options and namespace connection as the connector's table;
 * scans only learn to report a manifest-answered {@code COUNT(*)} as complete
 * ({@link CompleteCountScanBuilder}), and read options can ask for another version
 * ({@link TimeTravelOptions}).
 */
final class CatalogTable extends LancePositionDeltaDataset {
  private final transient String name;
  private final transient Map<String, String> properties;
  private final transient Supplier<Map<String, String>> live;
  private final transient TableHandle handle;
  /** The version a SQL {@code VERSION/TIMESTAMP AS OF} loaded, or null for latest. */
  private final transient Long asOfVersion;

  /**
   * @param live properties read at each call (the current version of a table read at "latest"
   *     changes with every write, which never passes through the catalog)
   * @param handle the table's data-path handle, to resolve versions asked for in read options
   * @param asOfVersion the version SQL time travel loaded, or {@code null} for latest
   */
  CatalogTable(LanceDataset base, boolean managedVersioning, String name,
      Map<String, String> properties, Supplier<Map<String, String>> live, TableHandle handle,
      Long asOfVersion) {
    super(base.readOptions(), base.schema(), base.getInitialStorageOptions(),
        base.getNamespaceImpl(), base.getNamespaceProperties(), managedVersioning,
        base.getFileFormatVersion());
    this.name = name;
    this.properties = Map.copyOf(properties);
    this.live = live;
    this.handle = handle;
    this.asOfVersion = asOfVersion;
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    if (options.isEmpty()) {
      return new CompleteCountScanBuilder((LanceScanBuilder) super.newScanBuilder(options));
    }
    Long asked = TimeTravelOptions.resolve(options, handle, name, asOfVersion, schema());
    // lance-spark rebuilds its read options from scratch when a scan has options, dropping the
    // version (of SQL time travel) and the catalog name; rebuild them here keeping both.
    LanceSparkReadOptions base = readOptions();
    Map<String, String> merged = new HashMap<>(base.getStorageOptions());
    options.asCaseSensitiveMap().forEach((k, v) -> {
      if (!TimeTravelOptions.isTimeTravelKey(k)) {
        merged.put(k, v);
      }
    });
    LanceSparkReadOptions.Builder read = LanceSparkReadOptions.builder()
        .datasetUri(base.getDatasetUri())
        .namespace(base.getNamespace())
        .tableId(base.getTableId())
        .catalogName(base.getCatalogName())
        .fromOptions(merged);
    Integer version = asked != null ? Integer.valueOf(Math.toIntExact(asked)) : base.getVersion();
    if (version != null) {
      read.version(version);
    }
    return new CompleteCountScanBuilder(new LanceScanBuilder(schema(), read.build(),
        getInitialStorageOptions(), getNamespaceImpl(), getNamespaceProperties()));
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
