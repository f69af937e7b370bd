package io.lancerest.spark.mv.fragments;

import io.lancerest.spark.connector.CredentialRefresh;
import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.connector.LanceTables;
import io.lancerest.spark.connector.TableHandle;
import io.lancerest.spark.connector.read.SafeScanBuilder;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.connector.catalog.MetadataColumn;
import org.apache.spark.sql.connector.catalog.SupportsMetadataColumns;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.lance.spark.LanceDataset;
import org.lance.spark.LanceSparkReadOptions;

/**
 * Reading a Lance dataset by path through lance-spark, whatever the user's catalogs are called.
 *
 * <p>lance-spark's data source resolves a path read through a Spark catalog: the one named by
 * option {@code catalog}, else the catalog named {@code lance} if the session has one, else a
 * {@code lance_default} it registers itself. Users commonly name the LanceRestCatalog {@code
 * lance}, and a path is not an identifier that catalog accepts, so every engine read names
 * lance-spark's own path catalog explicitly.
 */
public final class LanceReads {
  /** The catalog lance-spark registers for path reads. */
  public static final String PATH_CATALOG = "lance_default";

  private LanceReads() {}

  /** A reader of {@code format("lance")} bound to lance-spark's path catalog. */
  public static DataFrameReader reader(SparkSession spark, Map<String, String> storageOptions,
      Long version) {
    String key = "spark.sql.catalog." + PATH_CATALOG;
    if (!spark.conf().contains(key)) {
      spark.conf().set(key, "org.lance.spark.LanceNamespaceSparkCatalog");
    }
    DataFrameReader r = spark.read().format("lance").options(storageOptions)
        .option("catalog", PATH_CATALOG);
    if (version != null) {
      r = r.option("version", String.valueOf(version));
    }
    return r;
  }

  /**
   * The dataset at {@code location} ({@code version} {@code null}: latest), read through
   * lance-spark the way the catalog's tables are ({@link SafeScanBuilder}): lance-core runs the
   * scan in linear time whatever the state of the fragments, and filters lance-spark cannot write
   * as a Lance filter (a string with a quote, ...) are evaluated by Spark instead of pushed
   * down; everything else is lance-spark's own scan.
   */
  /** {@link #load(SparkSession, String, Map, Long)} of a resolved table. */
  public static Dataset<Row> load(SparkSession spark, LanceLocation table, Long version) {
    return load(spark, table.uri(), table.storageOptions(), version, null);
  }

  /** {@link #load(SparkSession, String, Map, Long, Integer)} of a resolved table. */
  public static Dataset<Row> load(SparkSession spark, LanceLocation table, Long version,
      Integer batchRows) {
    return load(spark, table.uri(), table.storageOptions(), version, batchRows);
  }

  public static Dataset<Row> load(SparkSession spark, String location,
      Map<String, String> storageOptions, Long version) {
    return load(spark, location, storageOptions, version, null);
  }

  /**
   * {@link #load(SparkSession, String, Map, Long)} reading {@code batchRows} rows a batch
   * ({@code null}: lance-spark's 8,192), as the catalog reads its tables ({@code ScanBatchRows}).
   */
  public static Dataset<Row> load(SparkSession spark, String location,
      Map<String, String> storageOptions, Long version, Integer batchRows) {
    Map<String, String> withBatch = storageOptions == null ? Map.of() : storageOptions;
    if (batchRows != null) {
      withBatch = new java.util.HashMap<>(withBatch);
      withBatch.put(LanceSparkReadOptions.CONFIG_BATCH_SIZE, String.valueOf(batchRows));
    }
    return loadWith(spark, location, withBatch, version);
  }

  private static Dataset<Row> loadWith(SparkSession spark, String location,
      Map<String, String> storageOptions, Long version) {
    if (storageOptions != null && !storageOptions.isEmpty() && location.contains("://")
        && !location.startsWith("file:")) {
      // lance-spark 0.4.0's path catalog opens the dataset (for its schema, at analysis) with
      // its own catalog-level storage.* options only, never the read's: an s3:// source then
      // fails with "Failed to resolve region for bucket". Such a dataset is opened the way the
      // catalog opens its tables, with the options in lance-spark's read options (which its
      // scan tasks use). The relation keeps the read's options, as on the path below: scan
      // options among them (a vector search's "nearest") reach the scan builder.
      Map<String, String> storage = new java.util.HashMap<>(storageOptions);
      storage.remove(LanceSparkReadOptions.CONFIG_BATCH_SIZE); // a read option, not storage
      TableHandle h = CredentialRefresh.handle(location, storage).version(version)
          .build();
      if (!(LanceTables.loadTable(h, PATH_CATALOG) instanceof LanceDataset t)) {
        throw new IllegalStateException("lance-spark opened " + location
            + " as something other than a Lance dataset");
      }
      Map<String, String> options = new java.util.HashMap<>(storageOptions);
      if (version != null) {
        options.put("version", String.valueOf(version));
      }
      return Dataset.ofRows(spark, DataSourceV2Relation.create(new FaithfulTable(t),
          scala.Option.empty(), scala.Option.empty(), new CaseInsensitiveStringMap(options)));
    }
    Dataset<Row> read = reader(spark, storageOptions, version).load(location);
    LogicalPlan plan = read.logicalPlan();
    if (!(plan instanceof DataSourceV2Relation rel) || !(rel.table() instanceof LanceDataset t)) {
      throw new IllegalStateException("lance-spark read " + location + " as a "
          + plan.nodeName() + ", not a table scan");
    }
    return Dataset.ofRows(spark, new DataSourceV2Relation(new FaithfulTable(t), rel.output(),
        rel.catalog(), rel.identifier(), rel.options()));
  }

  /** lance-spark's table, read only, with its scans built by {@link SafeScanBuilder}. */
  private static final class FaithfulTable implements SupportsRead, SupportsMetadataColumns {
    private final LanceDataset lance;

    FaithfulTable(LanceDataset lance) {
      this.lance = lance;
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
      return SafeScanBuilder.of(lance, options);
    }

    @Override
    public String name() {
      return lance.name();
    }

    @Override
    @SuppressWarnings("deprecation")
    public StructType schema() {
      return lance.schema();
    }

    @Override
    public Transform[] partitioning() {
      return lance.partitioning();
    }

    @Override
    public Map<String, String> properties() {
      return lance.properties();
    }

    @Override
    public Set<TableCapability> capabilities() {
      return Set.of(TableCapability.BATCH_READ);
    }

    @Override
    public MetadataColumn[] metadataColumns() {
      return lance.metadataColumns();
    }
  }
}
