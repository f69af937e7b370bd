package io.lancerest.spark.catalog;

import io.lancerest.spark.connector.FaithfulFilters;
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
import org.apache.spark.sql.types.StructType;
import org.lance.spark.read.LanceScanBuilder;

/**
 * lance-spark's scan builder, plus one thing it leaves out: telling Spark that a pushed
 * {@code COUNT(*)} answered from the dataset's manifest is the <i>complete</i> result; and
 * minus one it gets wrong: filters lance-spark cannot write as a Lance filter (a string with a
 * quote, ...) are not pushed down but left to Spark ({@link FaithfulFilters}).
 *
 * <p>lance-spark answers {@code SELECT count(*)} without filters from the manifest (a
 * {@link LocalScan} of one row), but reports the push-down as partial, so Spark still plans a
 * final aggregate over it, with an exchange, and runs a job for a number it already has. Saying
 * "complete" when, and only when, the scan built is that one-row local scan lets Spark answer
 * from the driver. Every other push-down goes to lance-spark unchanged: filtered counts are
 * per-fragment partial counts and stay partial.
 *
 * <p>Spark asks {@link #supportCompletePushDown} before {@link #pushAggregation} (to decide how
 * to translate the aggregate) and again after building the scan (to decide the plan); only the
 * second answer shapes the plan, and it is based on the scan actually built.
 */
public final class CompleteCountScanBuilder implements SupportsPushDownRequiredColumns,
    SupportsPushDownFilters, SupportsPushDownLimit, SupportsPushDownOffset, SupportsPushDownTopN,
    SupportsPushDownAggregates {
  private final LanceScanBuilder delegate;
  private Scan built;

  /** Wraps {@code delegate}; also used by the view engine's reads of lance-spark's tables. */
  public CompleteCountScanBuilder(LanceScanBuilder delegate) {
    this.delegate = delegate;
  }

  @Override
  public Scan build() {
    built = delegate.build();
    return built;
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

  @Override
  public void pruneColumns(StructType requiredSchema) {
    delegate.pruneColumns(requiredSchema);
  }

  @Override
  public Filter[] pushFilters(Filter[] filters) {
    return FaithfulFilters.push(delegate, filters);
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
