package io.lancerest.spark;

import io.lancerest.spark.mv.sql.MaterializedViewSqlParser;
import io.lancerest.spark.mv.sql.ViewWriteGuard;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import scala.runtime.AbstractFunction1;
import scala.runtime.AbstractFunction2;
import scala.runtime.BoxedUnit;

/**
 * {@code spark.sql.extensions = io.lancerest.spark.LanceRestSparkExtensions}: adds the
 * materialized-view statements (CREATE / REFRESH / DROP / SHOW / DESCRIBE MATERIALIZED VIEW),
 * {@code ALTER TABLE ... CREATE INDEX ... USING ivf_flat} and the other index methods
 * lance-spark 0.4.0 lacks (the vector ones, bitmap), {@code SHOW INDEXES} (with each index's
 * segments), the search table functions {@code vector_search} and {@code search}
 * ({@link io.lancerest.spark.search.SearchFunctions}), and refuses lance-spark's column
 * backfills into a view ({@link ViewWriteGuard}).
 * Other statements pass to the next parser, so it can be listed together with lance-spark's
 * {@code org.lance.spark.extensions.LanceSparkSessionExtensions}, in either order.
 */
public final class LanceRestSparkExtensions
    extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    extensions.injectParser(new AbstractFunction2<SparkSession, ParserInterface,
        ParserInterface>() {
      @Override
      public ParserInterface apply(SparkSession session, ParserInterface delegate) {
        return new MaterializedViewSqlParser(session, delegate);
      }
    });
    extensions.injectCheckRule(new AbstractFunction1<SparkSession,
        scala.Function1<LogicalPlan, BoxedUnit>>() {
      @Override
      public scala.Function1<LogicalPlan, BoxedUnit> apply(SparkSession session) {
        return new ViewWriteGuard();
      }
    });
    io.lancerest.spark.search.SearchFunctions.all().forEach(extensions::injectTableFunction);
    return BoxedUnit.UNIT;
  }
}
