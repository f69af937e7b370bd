package io.lancerest.spark.mv.query;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.collection.JavaConverters;
import scala.runtime.AbstractPartialFunction;

/**
 * The SELECTs of stored views, checked again before a refresh for what CREATE refuses but a
 * definition stored without that check (by an earlier version of this engine, or by another
 * client) may hold: a function of the clock or the session ({@link CurrentLikeFunctions}).
 * Without it such a view would drift from its SELECT at every refresh, silently.
 *
 * <p>One per catalog, kept in its refresh caches: a definition that passed is not analyzed
 * again, since the analysis costs about as much as a refresh with nothing to do. A pass is kept
 * only for a SELECT that calls no user-defined function: then its text alone says which
 * functions it calls ({@link UserDefinedFunctions}).
 */
public final class StoredSelects {
  private static final Logger LOG = LoggerFactory.getLogger(StoredSelects.class);
  /** Definitions remembered as checked; the least recently used goes first. */
  static final int CAPACITY = 1024;
  /** The name the SELECT reads from, replaced by the source as the refresh reads it. */
  private static final String SOURCE = "source";

  private final Map<String, Boolean> passed = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
      return size() > CAPACITY;
    }
  };

  /**
   * Refuses view {@code viewName}, defined by {@code q}, when its SELECT uses a function of the
   * clock or the session. A SELECT that does not analyze against today's {@code source} is let
   * through: the refresh reports that in its own words.
   *
   * @throws InvalidViewDefinitionException naming the view, the function and what to do
   */
  public void check(SparkSession spark, LanceLocation source, SourceQuery q, String viewName) {
    String key = q.toJson();
    synchronized (passed) {
      if (passed.get(key) != null) { // get, not containsKey: it marks the entry recently used
        return;
      }
    }
    LogicalPlan plan = analyzed(spark, source, q, viewName);
    if (plan == null) {
      return;
    }
    CurrentLikeFunctions.refuseStored(plan, viewName);
    if (!UserDefinedFunctions.calledBy(plan)) {
      synchronized (passed) {
        passed.put(key, Boolean.TRUE);
      }
    }
  }

  /**
   * The SELECT {@code q} stands for, as CREATE analyzes it ({@link SourceQuerySql}), over the
   * source read by its location as refreshes read it; {@code null} when it does not analyze.
   */
  private static LogicalPlan analyzed(SparkSession spark, LanceLocation source, SourceQuery q,
      String viewName) {
    try {
      LogicalPlan select = spark.sessionState().sqlParser().parsePlan(
          SourceQuerySql.select(q, List.of(SOURCE)));
      LogicalPlan table = QueryLayout.readSource(spark, source, null).logicalPlan();
      LogicalPlan bound = select.transformUp(
          new AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
            @Override
            public boolean isDefinedAt(LogicalPlan p) {
              return p instanceof UnresolvedRelation r && JavaConverters.seqAsJavaList(
                  r.multipartIdentifier()).equals(List.of(SOURCE));
            }

            @Override
            public LogicalPlan apply(LogicalPlan p) {
              return table;
            }
          });
      return Dataset.ofRows(spark, bound).queryExecution().analyzed();
    } catch (Exception e) { // Spark's AnalysisException and ParseException arrive undeclared
      LOG.debug("View {}: its SELECT was not checked for functions of the clock, it does not "
          + "analyze against its source: {}", viewName, e.toString());
      return null;
    }
  }
}
