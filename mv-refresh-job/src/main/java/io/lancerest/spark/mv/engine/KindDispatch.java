package io.lancerest.spark.mv.engine;

import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.chunker.ChunkerViews;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.engine.CatalogBinding.TableLocation;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.layout.GenevaLayout;
import io.lancerest.spark.mv.query.QueryViews;
import io.lancerest.spark.mv.refresh.JobTracker;
import io.lancerest.spark.mv.refresh.RefreshCaches;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.ViewKind;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import io.lancerest.spark.mv.udtf.UdtfViews;
import java.util.EnumMap;
import java.util.Map;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.SparkSession;

/**
 * The one place a view's kind is mapped to its {@link ViewKind}: {@link QueryViews}, {@link
 * ChunkerViews} or {@link UdtfViews}. CREATE, SQL REFRESH, the Java API and the RefreshJob CLI
 * all end here.
 */
final class KindDispatch {
  private KindDispatch() {}

  private static final Map<MaterializedViewKind, ViewKind> KINDS = kinds(QueryViews.KIND,
      ChunkerViews.KIND, UdtfViews.KIND);

  private static Map<MaterializedViewKind, ViewKind> kinds(ViewKind... all) {
    Map<MaterializedViewKind, ViewKind> m = new EnumMap<>(MaterializedViewKind.class);
    for (ViewKind k : all) {
      if (m.put(k.kind(), k) != null) {
        throw new IllegalStateException("Two implementations of view kind " + k.kind());
      }
    }
    if (m.size() != MaterializedViewKind.values().length) {
      throw new IllegalStateException("A view kind has no implementation: " + m.keySet());
    }
    return m;
  }

  /** The kind's part of CREATE and REFRESH. */
  static ViewKind of(MaterializedViewKind kind) {
    return KINDS.get(kind);
  }

  static RefreshResult refresh(SparkSession spark, String viewName, TableLocation view,
      TableLocation source, ViewDefinition def, RefreshOptions options, JobTracker job,
      RefreshListener listener, RefreshCaches caches) {
    options.checkApplicableTo(def.kind());
    RefreshContext ctx = new RefreshContext(spark, viewName, listener, caches, job);
    try {
      return of(def.kind()).refresh(ctx, tables(viewName, view, source), def, options);
    } catch (Exception e) {
      throw unfit(viewName, def, e);
    }
  }

  /** What {@link #refresh} would do, with nothing written or committed. */
  static RefreshPlan explain(SparkSession spark, String viewName, TableLocation view,
      TableLocation source, ViewDefinition def, RefreshOptions options) {
    options.checkApplicableTo(def.kind());
    try {
      return of(def.kind()).explain(spark, tables(viewName, view, source), def, options);
    } catch (Exception e) {
      throw unfit(viewName, def, e);
    }
  }

  private static ViewTables tables(String viewName, TableLocation view, TableLocation source) {
    return new ViewTables(viewName, view.dataset(), source.dataset(), null, view.properties());
  }

  /**
   * {@code e} as thrown to the user: Spark's analysis of the stored SELECT against today's
   * source (a checked exception in Java's eyes, hence the broad catch of the callers) means the
   * source no longer has what the view reads.
   */
  private static RuntimeException unfit(String viewName, ViewDefinition def, Exception e) {
    if (e instanceof AnalysisException ae) {
      return new InvalidViewDefinitionException("View " + viewName + " no longer fits its "
          + "source table " + String.join(".", def.sourceQuery().sourceTableId()) + ": "
          + ae.getSimpleMessage() + ". A column its SELECT reads was dropped, renamed or "
          + "changed since the view was created; nothing was committed. Recreate the view "
          + "(DROP MATERIALIZED VIEW, then CREATE MATERIALIZED VIEW) over the new schema", e);
    }
    return e instanceof RuntimeException re ? re : new MaterializedViewException("View "
        + viewName + ": " + e.getMessage(), e);
  }

  /** Geneva's view columns of the kind never come from the function (used by describe). */
  static boolean isLayoutColumn(String name) {
    return name.equals(GenevaLayout.SOURCE_ROW_ID) || name.equals(GenevaLayout.IS_SET)
        || name.equals(GenevaLayout.CHILD_INDEX);
  }
}
