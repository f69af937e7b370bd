package io.lancerest.spark.catalog;

import io.lancerest.spark.connector.TableHandle;
import io.lancerest.spark.connector.read.SafeScanBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.sql.connector.catalog.MetadataColumn;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.RowLevelOperationBuilder;
import org.apache.spark.sql.connector.write.RowLevelOperationInfo;
import org.apache.spark.sql.connector.write.SupportsDelta;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.lance.spark.LanceDataset;
import org.lance.spark.LancePositionDeltaDataset;
import org.lance.spark.LanceSparkReadOptions;

/**
 * The connector's lance-spark table plus what the catalog knows about it: its name and the
 * properties Spark shows in {@code DESCRIBE TABLE EXTENDED} and {@code SHOW TBLPROPERTIES}
 * (lance-spark's own table reports none).
 *
 * <p>Everything else (scans, writes, DELETE / UPDATE / MERGE) is lance-spark's, built from the
 * very same read options, storage options and namespace connection as the connector's table;
 * scans (also those of DELETE / UPDATE / MERGE) are built by the connector's {@link
 * SafeScanBuilder}: lance-core runs them in linear time whatever the state of the fragments,
 * filters lance-spark cannot write for Lance are left to Spark, and a manifest-answered {@code
 * COUNT(*)} is reported complete. Read options can ask for another version
 * ({@link TimeTravelOptions}).
 */
final class CatalogTable extends LancePositionDeltaDataset
    implements MaterializedViewTable {
  private final transient String name;
  private final transient Map<String, String> properties;
  private final transient Supplier<Map<String, String>> live;
  private final transient TableHandle handle;
  /** The version a SQL {@code VERSION/TIMESTAMP AS OF} loaded, or null for latest. */
  private final transient Long asOfVersion;
  private final transient MaterializedViewLayout view;
  /** {@link #schema()}: the stored schema without a view's hidden layout columns. */
  private final transient StructType visible;

  /**
   * @param live properties read at each call (the current version of a table read at "latest"
   *     changes with every write, which never passes through the catalog)
   * @param handle the table's data-path handle, to resolve versions asked for in read options
   * @param asOfVersion the version SQL time travel loaded, or {@code null} for latest
   * @param view whether the table is a materialized view, and its hidden layout columns
   */
  CatalogTable(LanceDataset base, boolean managedVersioning, String name,
      Map<String, String> properties, Supplier<Map<String, String>> live, TableHandle handle,
      Long asOfVersion, MaterializedViewLayout view) {
    super(base.readOptions(), base.schema(), base.getInitialStorageOptions(),
        base.getNamespaceImpl(), base.getNamespaceProperties(), managedVersioning,
        base.getFileFormatVersion());
    this.name = name;
    this.properties = Map.copyOf(properties);
    this.live = live;
    this.handle = handle;
    this.asOfVersion = asOfVersion;
    this.view = view;
    this.visible = view.hidden().isEmpty() ? sparkSchema
        : new StructType(Arrays.stream(sparkSchema.fields())
            .filter(f -> !view.hidden().contains(f.name())).toArray(StructField[]::new));
  }

  /** The table's columns; a materialized view's layout columns are metadata columns instead. */
  @Override
  public StructType schema() {
    return visible;
  }

  @Override
  public MetadataColumn[] metadataColumns() {
    MetadataColumn[] lance = super.metadataColumns();
    if (view.hidden().isEmpty()) {
      return lance;
    }
    List<MetadataColumn> all = new ArrayList<>(Arrays.asList(lance));
    for (StructField f : sparkSchema.fields()) {
      if (view.hidden().contains(f.name())) {
        all.add(new MetadataColumn() {
          @Override
          public String name() {
            return f.name();
          }

          @Override
          public DataType dataType() {
            return f.dataType();
          }

          @Override
          public boolean isNullable() {
            return f.nullable();
          }

          @Override
          public String comment() {
            return "materialized view layout column";
          }
        });
      }
    }
    return all.toArray(MetadataColumn[]::new);
  }

  @Override
  public boolean isMaterializedView() {
    return view.isView();
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    if (view.isView()) {
      throw MaterializedViewLayout.writeRefused(name, "write to");
    }
    return super.newWriteBuilder(info);
  }

  @Override
  public RowLevelOperationBuilder newRowLevelOperationBuilder(RowLevelOperationInfo info) {
    if (view.isView()) {
      throw MaterializedViewLayout.writeRefused(name,
          info.command().name().toLowerCase(Locale.ROOT) + " rows of");
    }
    RowLevelOperationBuilder lance = super.newRowLevelOperationBuilder(info);
    // lance-spark's operation scans with this table's schema and read options
    return () -> new FaithfulDeltaOperation((SupportsDelta) lance.build(),
        () -> SafeScanBuilder.of(sparkSchema, readOptions(), getInitialStorageOptions(),
            getNamespaceImpl(), getNamespaceProperties()));
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    if (options.containsKey(LanceSparkReadOptions.CONFIG_NEAREST)) {
      throw NearestOption.refused(name, options.get(LanceSparkReadOptions.CONFIG_NEAREST));
    }
    if (options.isEmpty()) {
      // what lance-spark's own newScanBuilder builds for no options
      return SafeScanBuilder.of(sparkSchema, readOptions(), getInitialStorageOptions(),
          getNamespaceImpl(), getNamespaceProperties());
    }
    // The stored schema (with a view's hidden layout columns): what other versions compare to.
    Long asked = TimeTravelOptions.resolve(options, handle, name, asOfVersion, sparkSchema);
    // lance-spark rebuilds its read options from scratch when a scan has options, dropping the
    // version (of SQL time travel) and the catalog name; rebuild them here keeping both.
    LanceSparkReadOptions base = readOptions();
    Map<String, String> merged = new HashMap<>(base.getStorageOptions());
    options.asCaseSensitiveMap().forEach((k, v) -> {
      if (!TimeTravelOptions.isTimeTravelKey(k)) {
        merged.put(k, v);
      }
    });
    // the table's batch size (lance-spark's options default it), unless the scan sets its own
    if (!options.containsKey(LanceSparkReadOptions.CONFIG_BATCH_SIZE)) { // any case
      merged.put(LanceSparkReadOptions.CONFIG_BATCH_SIZE, String.valueOf(base.getBatchSize()));
    }
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
    return SafeScanBuilder.of(sparkSchema, read.build(), getInitialStorageOptions(),
        getNamespaceImpl(), getNamespaceProperties());
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
