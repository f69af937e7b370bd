package io.lancerest.spark.connector.read;

import io.lancerest.spark.connector.FaithfulFilters;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.expressions.aggregate.CountStar;
import org.apache.spark.sql.connector.read.LocalScan;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.SupportsPushDownAggregates;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownOffset;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownTopN;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.lance.spark.LanceDataset;
import org.lance.spark.LanceSparkReadOptions;
import org.lance.spark.read.LanceScanBuilder;

/**
 * The scan builder of every read of a Lance table here (catalog scans, the scans of DELETE /
 * UPDATE / MERGE, the view engine's reads): lance-spark's own, with three things added.
 *
 * <ul>
 *   <li><b>Scans lance-core runs in linear time.</b> The dataset's fragments are classified
 *       ({@link FragmentHazard}) at the version the scan reads, and the scan is pinned to that
 *       version. Filtered reads of fragments with deletions also fetch {@code _rowaddr}; no filter
 *       reaches lance-core for fragments a compaction rewrote, so when the table has such
 *       fragments every filter is also evaluated by Spark; and their {@code _rowid} is mapped from
 *       row addresses ({@link SafeScan}). Rows are exactly what lance-spark's scan gives.
 *   <li><b>Faithful filters.</b> Filters lance-spark would write wrongly for Lance (a string with
 *       a quote, ...) are left to Spark ({@link FaithfulFilters}).
 *   <li><b>A complete {@code COUNT(*)}.</b> lance-spark answers {@code SELECT count(*)} without
 *       filters from the manifest (a {@link LocalScan} of one row), but reports the push-down as
 *       partial, so Spark plans a final aggregate and a job for a number it has. Saying
 *       "complete" when, and only when, the scan built is that local scan lets Spark answer from
 *       the driver. Spark asks {@link #supportCompletePushDown} before {@link #pushAggregation}
 *       and again after {@link #build}; only the second answer shapes the plan.
 * </ul>
 */
public final class SafeScanBuilder implements SupportsPushDownRequiredColumns,
    SupportsPushDownFilters, SupportsPushDownLimit, SupportsPushDownOffset, SupportsPushDownTopN,
    SupportsPushDownAggregates {
  private final LanceScanBuilder delegate;
  /** The table's columns as Spark sees them, whole (see {@link #pruneColumns}). */
  private final StructType schema;
  private final TableFragments fragments;
  private final String table;
  private final boolean nearest;
  private final Long credentialsExpireAt;
  private boolean filtersReturned;
  private Scan built;

  private SafeScanBuilder(LanceScanBuilder delegate, StructType schema, TableFragments fragments,
      String table, boolean nearest, Long credentialsExpireAt) {
    this.delegate = delegate;
    this.schema = schema;
    this.fragments = fragments;
    this.table = table;
    this.nearest = nearest;
    this.credentialsExpireAt = credentialsExpireAt;
  }

  /**
   * A scan of the dataset {@code readOptions} name, built as lance-spark's {@code LanceDataset}
   * builds it, at the version the hazards are read at ({@code readOptions}' version, else the
   * latest now).
   */
  public static SafeScanBuilder of(StructType schema, LanceSparkReadOptions readOptions,
      Map<String, String> initialStorageOptions, String namespaceImpl,
      Map<String, String> namespaceProperties) {
    TableFragments f = TableFragments.read(readOptions);
    LanceSparkReadOptions pinned = readOptions.getVersion() != null ? readOptions
        : readOptions.withVersion(Math.toIntExact(f.version()));
    String name = readOptions.getTableId() != null && !readOptions.getTableId().isEmpty()
        ? String.join(".", readOptions.getTableId()) : readOptions.getDatasetUri();
    return new SafeScanBuilder(new LanceScanBuilder(schema, pinned, initialStorageOptions,
        namespaceImpl, namespaceProperties), schema, f, name, readOptions.getNearest() != null,
        io.lancerest.spark.connector.CredentialRefresh.expiresAt(
            readOptions.getStorageOptions()));
  }

  /**
   * The scan {@code table.newScanBuilder(options)} builds, made safe: with the same read options
   * (lance-spark rebuilds them from the table's URI, namespace and storage options plus {@code
   * options} when there are options).
   */
  public static SafeScanBuilder of(LanceDataset table, CaseInsensitiveStringMap options) {
    return of(table.schema(), scanReadOptions(table.readOptions(), options),
        table.getInitialStorageOptions(), table.getNamespaceImpl(),
        table.getNamespaceProperties());
  }

  /** The read options lance-spark's {@code LanceDataset.newScanBuilder(options)} scans with. */
  public static LanceSparkReadOptions scanReadOptions(LanceSparkReadOptions base,
      CaseInsensitiveStringMap options) {
    if (options.isEmpty()) {
      return base;
    }
    Map<String, String> merged = new HashMap<>(base.getStorageOptions());
    merged.putAll(options.asCaseSensitiveMap());
    return LanceSparkReadOptions.builder().datasetUri(base.getDatasetUri())
        .namespace(base.getNamespace()).tableId(base.getTableId()).fromOptions(merged).build();
  }

  /** The fragments and hazards of the version this scan reads. */
  public TableFragments fragments() {
    return fragments;
  }

  @Override
  public Scan build() {
    built = delegate.build();
    if (built instanceof LocalScan) {
      return built; // answered from the manifest: nothing is read
    }
    return new SafeScan(built, fragments, filtersReturned, table, credentialsExpireAt);
  }

  @Override
  public boolean supportCompletePushDown(Aggregation aggregation) {
    boolean countStarOnly = aggregation.groupByExpressions().length == 0
        && aggregation.aggregateExpressions().length == 1
        && aggregation.aggregateExpressions()[0] instanceof CountStar;
    if (!countStarOnly) {
      return false;
    }
    // Before the scan is built: only a count without filters can come from the manifest.
    return built == null ? delegate.pushedFilters().length == 0 : built instanceof LocalScan;
  }

  @Override
  public boolean pushAggregation(Aggregation aggregation) {
    return delegate.pushAggregation(aggregation);
  }

  /**
   * Prunes to the required top-level columns, each read whole. Spark's nested-schema pruning
   * asks for part of a struct ({@code struct<b>} of {@code struct<a, b>}); lance-spark 0.4.0
   * reads the struct's fields by position then, which gave a query of {@code s.b} the values of
   * {@code s.a}, or failed on a type mismatch. A whole column costs the struct's other fields;
   * Spark selects the nested field itself.
   */
  @Override
  public void pruneColumns(StructType requiredSchema) {
    delegate.pruneColumns(wholeColumns(schema, requiredSchema));
  }

  /** {@code required} with each column of {@code table} at its full type (others as given). */
  static StructType wholeColumns(StructType table, StructType required) {
    java.util.Set<String> names = new java.util.HashSet<>(
        java.util.Arrays.asList(table.fieldNames()));
    StructField[] out = new StructField[required.fields().length];
    for (int i = 0; i < out.length; i++) {
      StructField f = required.fields()[i];
      out[i] = names.contains(f.name()) ? table.fields()[table.fieldIndex(f.name())] : f;
    }
    return new StructType(out);
  }

  @Override
  public Filter[] pushFilters(Filter[] filters) {
    Filter[] post = FaithfulFilters.push(delegate, filters);
    // a vector search keeps its filter (a prefilter of the search: SafeScan refuses a search
    // of rewritten fragments)
    if (fragments.any(FragmentHazard.REWRITTEN_ROW_IDS) && filters.length > 0 && !nearest) {
      // lance-core gets the filter only for the other fragments (SafeScan): Spark evaluates
      // every filter after the scan, so no limit, offset, top-N or aggregate is pushed either
      filtersReturned = true;
      return filters.clone();
    }
    return post;
  }

  @Override
  public Filter[] pushedFilters() {
    return delegate.pushedFilters();
  }

  @Override
  public boolean pushLimit(int limit) {
    return delegate.pushLimit(limit);
  }

  @Override
  public boolean pushOffset(int offset) {
    return delegate.pushOffset(offset);
  }

  @Override
  public boolean pushTopN(SortOrder[] orders, int limit) {
    return delegate.pushTopN(orders, limit);
  }

  @Override
  public boolean isPartiallyPushed() {
    return delegate.isPartiallyPushed();
  }
}
