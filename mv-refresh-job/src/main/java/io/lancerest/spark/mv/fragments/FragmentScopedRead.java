package io.lancerest.spark.mv.fragments;

import io.lancerest.spark.connector.FaithfulFilters;
import io.lancerest.spark.connector.read.SafeScan;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.connector.catalog.MetadataColumn;
import org.apache.spark.sql.connector.catalog.SupportsMetadataColumns;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.lance.spark.read.FilterPushDown;

/**
 * A lance-spark read of a dataset restricted to some of its fragments.
 *
 * <p>lance-spark plans one input partition per fragment and prunes partitions only for {@code
 * _rowaddr = / IN} filters, which lance-core 4.0.0 then also applies as a row filter (and
 * matches nothing). So the restriction happens at planning instead: the lance-spark table is
 * wrapped, its scan is built exactly as lance-spark builds it (same column pruning and filter
 * push-down, same readers), and only the input partitions of the wanted fragments are kept.
 * Everything else (types, metadata columns such as {@code _rowid} and {@code
 * _row_last_updated_at_version}, dataset version, storage options) is lance-spark's.
 */
public final class FragmentScopedRead {
  private FragmentScopedRead() {}

  /**
   * {@code read} (a lance-spark read by path or through a catalog, not yet transformed) limited
   * to the fragments {@code fragmentIds}. The result has the same columns.
   *
   * @throws IllegalArgumentException if {@code read} is not a plain lance-spark scan
   */
  public static Dataset<Row> restrict(Dataset<Row> read, Set<Integer> fragmentIds) {
    LogicalPlan plan = read.logicalPlan();
    if (!(plan instanceof DataSourceV2Relation rel) || !(rel.table() instanceof SupportsRead)) {
      throw new IllegalArgumentException("Not a plain lance-spark read: " + plan.nodeName());
    }
    ScopedTable table = new ScopedTable((SupportsRead) rel.table(), Set.copyOf(fragmentIds));
    DataSourceV2Relation scoped = new DataSourceV2Relation(table, rel.output(), rel.catalog(),
        rel.identifier(), rel.options());
    return Dataset.ofRows(read.sparkSession(), scoped);
  }

  /**
   * What lance-spark hands to Lance for {@code scan} (the scan of an optimized plan's {@code
   * DataSourceV2ScanRelation}), or {@code null} when it is not a {@link #restrict restricted}
   * read. Lance evaluates the pushed filters with its own (Arrow) semantics and Spark does not
   * check them again, so whoever wants the rows this scan gives must hand Lance the same
   * filter.
   */
  public static LanceRead lanceRead(Scan scan) {
    return scan instanceof ScopedScan s ? new LanceRead(s.pushed.clone(), s.where,
        s.inner instanceof SafeScan safe && safe.filtersReturned()) : null;
  }

  /**
   * The filter part of a restricted read that Lance evaluates.
   *
   * @param pushed the filters lance-spark accepted
   * @param where the SQL filter lance-spark's readers give lance-core's scan for them, built by
   *     lance-spark's own code; {@code null} when nothing is pushed
   * @param alsoBySpark whether Spark evaluates the pushed filters again after the scan (the
   *     source has fragments lance-core must not filter, {@link SafeScan}); otherwise Spark
   *     relies on Lance having applied them
   */
  public record LanceRead(Filter[] pushed, String where, boolean alsoBySpark) {}

  /** The lance-spark table, with scans limited to some fragments. */
  private static final class ScopedTable implements SupportsRead, SupportsMetadataColumns {
    private final SupportsRead inner;
    private final Set<Integer> fragments;

    ScopedTable(SupportsRead inner, Set<Integer> fragments) {
      this.inner = inner;
      this.fragments = fragments;
    }

    @Override
    public String name() {
      return inner.name() + " fragments " + new TreeSet<>(fragments);
    }

    @Override
    @SuppressWarnings("deprecation")
    public StructType schema() {
      return inner.schema();
    }

    @Override
    public Transform[] partitioning() {
      return inner.partitioning();
    }

    @Override
    public Map<String, String> properties() {
      return inner.properties();
    }

    @Override
    public Set<TableCapability> capabilities() {
      return Set.of(TableCapability.BATCH_READ);
    }

    @Override
    public MetadataColumn[] metadataColumns() {
      return inner instanceof SupportsMetadataColumns m ? m.metadataColumns()
          : new MetadataColumn[0];
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
      return new ScopedScanBuilder(inner.newScanBuilder(options), fragments);
    }
  }

  /**
   * Column pruning and filter push-down as lance-spark does them, less the filters it cannot
   * write for Lance ({@link FaithfulFilters}); nothing else is pushed.
   */
  private static final class ScopedScanBuilder implements SupportsPushDownRequiredColumns,
      SupportsPushDownFilters {
    private final ScanBuilder inner;
    private final Set<Integer> fragments;

    ScopedScanBuilder(ScanBuilder inner, Set<Integer> fragments) {
      this.inner = inner;
      this.fragments = fragments;
    }

    @Override
    public void pruneColumns(StructType requiredSchema) {
      if (inner instanceof SupportsPushDownRequiredColumns p) {
        p.pruneColumns(requiredSchema);
      }
    }

    @Override
    public Filter[] pushFilters(Filter[] filters) {
      // lance-spark writes some filters wrongly for Lance (a string with a quote, ...): those
      // stay with Spark, so they are not in `pushed` and `where` either.
      return inner instanceof SupportsPushDownFilters p ? FaithfulFilters.push(p, filters)
          : filters;
    }

    @Override
    public Filter[] pushedFilters() {
      return inner instanceof SupportsPushDownFilters p ? p.pushedFilters() : new Filter[0];
    }

    @Override
    public Scan build() {
      Scan built = inner.build();
      Filter[] pushed = pushedFilters();
      // lance-spark's LanceScanBuilder.build() compiles its pushed filters with this very call
      // and its readers pass the string unchanged to lance-core (ScanOptions.filter); only
      // column pruning and filters are pushed here (no limit, offset, top-N or aggregate).
      org.lance.spark.utils.Optional<String> where =
          FilterPushDown.compileFiltersToSqlWhereClause(pushed == null ? new Filter[0] : pushed);
      return new ScopedScan(built, fragments, pushed, where.isPresent() ? where.get() : null);
    }
  }

  private static final class ScopedScan implements Scan {
    private final Scan inner;
    private final Set<Integer> fragments;
    private final Filter[] pushed;
    private final String where;

    ScopedScan(Scan inner, Set<Integer> fragments, Filter[] pushed, String where) {
      this.inner = inner;
      this.fragments = fragments;
      this.pushed = pushed == null ? new Filter[0] : pushed.clone();
      this.where = where;
    }

    @Override
    public StructType readSchema() {
      return inner.readSchema();
    }

    @Override
    public String description() {
      return inner.description() + " [fragments " + new TreeSet<>(fragments) + "]";
    }

    @Override
    public Batch toBatch() {
      Batch batch = inner.toBatch();
      return new Batch() {
        @Override
        public InputPartition[] planInputPartitions() {
          List<InputPartition> kept = new ArrayList<>();
          for (InputPartition p : batch.planInputPartitions()) {
            List<Integer> ids = SafeScan.fragmentsOf(p);
            if (ids == null) {
              throw new IllegalStateException("Unexpected lance-spark input partition "
                  + p.getClass().getName() + "; cannot restrict the read to fragments");
            }
            if (ids.stream().anyMatch(fragments::contains)) {
              if (!fragments.containsAll(ids)) {
                // One split per fragment in lance-spark 0.4.0; reading a mixed split would
                // return rows of fragments outside the scope.
                throw new IllegalStateException("lance-spark split " + ids + " mixes fragments "
                    + "in and out of " + new TreeSet<>(fragments));
              }
              kept.add(p);
            }
          }
          return kept.toArray(new InputPartition[0]);
        }

        @Override
        public PartitionReaderFactory createReaderFactory() {
          return batch.createReaderFactory();
        }
      };
    }
  }
}
