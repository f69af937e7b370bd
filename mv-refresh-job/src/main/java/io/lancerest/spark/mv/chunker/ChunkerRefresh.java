package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceIdentity;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.layout.GenevaLayout;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.RefreshDriver;
import io.lancerest.spark.mv.refresh.ViewRefresh;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshPlan;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.StructType;

/**
 * Incremental refresh of a chunker view, as one atomic commit.
 *
 * <p>State kept on the view table, changed only by the refresh's single commit: the watermark
 * (field metadata {@value #WATERMARK_KEY} on {@code __source_row_id}, as Geneva stores it, plus
 * schema metadata {@value #BASE_TABLE_VERSION_KEY}) and the set of <em>processed parents</em>
 * — every source row id that was expanded, including those that yielded no children, which is
 * why those are never re-run — with the truncated and skipped ones ({@link ParentState}: in the
 * config while small, else in a side file the config points to). Row ids and the watermark mean something only for the table they came from, so the
 * commit also records when that source version was written ({@link SourceIdentity}); over a
 * source dropped and created again under the same name the driver has the view rebuilt.
 *
 * <p>A refresh to source version {@code v}:
 * <ol>
 *   <li>scans the filtered source at {@code v} for row ids {@code S} and the ids updated after the
 *       watermark {@code U} ({@code _row_last_updated_at_version > watermark}) ({@link
 *       RefreshPlanner});
 *   <li>deletes the children of processed parents that are gone ({@code P - S}: deleted, or no
 *       longer matching the filter) or changed in place ({@code P ∩ U}) ({@link ExistingRows});
 *   <li>expands new ({@code S - P}) and changed parents in tasks that write fragments, on the
 *       driver when they are few ({@link ParentExpander});
 *   <li>commits deletions, new fragments, watermark and processed set in one {@link
 *       io.lancerest.spark.mv.commit.ViewCommit} ({@link RefreshStaging}).
 * </ol>
 * lance-spark's UPDATE gives an updated row a new row id: the old id is then gone and the new
 * one new, which the same rules handle. A failure anywhere before the commit leaves the view as
 * it was; the data files written so far are never referenced.
 */
public final class ChunkerRefresh {
  /** Field metadata on {@code __source_row_id}: the source version the view reflects. */
  public static final String WATERMARK_KEY = GenevaLayout.WATERMARK;
  /** Schema metadata: the same version, under Geneva's view key. */
  public static final String BASE_TABLE_VERSION_KEY = GenevaLayout.BASE_TABLE_VERSION;
  /**
   * Config: source row ids already expanded (roaring bitmap, base64), or {@link
   * ParentState#IN_FILE} when the sets are in a side file.
   */
  public static final String PROCESSED_KEY = "lancerest::view::chunker::processed_parents";
  /** Config: parents cut by {@code output_limit}; re-expanded by every refresh. */
  public static final String TRUNCATED_KEY = "lancerest::view::chunker::truncated_parents";
  /**
   * Config: filtered source rows at the watermark that are not processed (skipped or cut by
   * {@code output_limit}). When it is 0, or just the skipped parents (which it retries by id),
   * the next refresh scans only the source fragments that changed since the watermark; see
   * {@link SourceState}.
   */
  public static final String UNPROCESSED_KEY = "lancerest::view::chunker::unprocessed_parents";
  /** Where views refreshed before the keys moved to {@code lancerest::view::} keep them. */
  static final Map<String, String> LEGACY_KEYS = Map.of(
      PROCESSED_KEY, "lancerest.mv.chunker.processed_parents",
      TRUNCATED_KEY, "lancerest.mv.chunker.truncated_parents",
      UNPROCESSED_KEY, "lancerest.mv.chunker.unprocessed_parents");

  /** The legacy names present in {@code config}. */
  static java.util.Set<String> legacyKeysIn(Map<String, String> config) {
    java.util.Set<String> present = new java.util.HashSet<>(LEGACY_KEYS.values());
    present.retainAll(config.keySet());
    return present;
  }

  /** {@code key} of the view's config, or its legacy name's value. */
  static String configValue(Map<String, String> config, String key) {
    String v = config.get(key);
    return v != null ? v : config.get(LEGACY_KEYS.get(key));
  }

  private ChunkerRefresh() {}

  /** The view table's columns for this definition over this source DataFrame. */
  public static Schema viewSchema(Dataset<Row> source, ChunkerDefinition def) {
    return layout(source, def).viewSchema();
  }

  /** Refreshes the view in {@code ctx}: its job id, listener, caches and job record. */
  static ChunkerRefreshResult run(RefreshContext ctx, ViewTables t, ChunkerDefinition def,
      RefreshOptions options) {
    options.checkApplicableTo(MaterializedViewKind.CHUNKER);
    return RefreshDriver.refresh(ctx, t, options.srcVersion(), options.force(),
        options.maxRowsPerFragment(), kind(t, def, options));
  }

  /** What {@link #run} would do now, with nothing expanded, written or committed. */
  public static RefreshPlan explain(SparkSession spark, ViewTables t, ChunkerDefinition def,
      RefreshOptions options) {
    options.checkApplicableTo(MaterializedViewKind.CHUNKER);
    RefreshContext ctx = new RefreshContext(spark, t.viewName(), "explain", null);
    return RefreshDriver.explain(ctx, t, options.srcVersion(), options.force(),
        kind(t, def, options));
  }

  /** Chunker views in {@link RefreshDriver}'s sequence: one {@link ChunkerRun} per attempt. */
  private static ViewRefresh<ChunkerRefreshResult> kind(ViewTables t, ChunkerDefinition def,
      RefreshOptions o) {
    return ViewRefresh.of(MaterializedViewKind.CHUNKER, function(def),
        r -> new ViewRefresh.Outcome(r.status(), r.sourceVersion(), r.rowsInserted(),
            r.rowsDeleted(), r.skipped().size()),
        (ctx, target) -> RefreshPlanner.prepare(ChunkerRun.of(ctx, t, target.datasets(), def, o),
            target));
  }

  /** The view's chunker as a failure of it names it. */
  static String function(ChunkerDefinition def) {
    return "chunker '" + def.function().name() + "' (" + def.function().className() + ")";
  }

  static Dataset<Row> read(SparkSession spark, ViewTables t, Long version) {
    // Bound to lance-spark's path catalog: a session catalog named "lance" would capture it.
    return io.lancerest.spark.mv.fragments.LanceReads.load(spark, t.source(), version);
  }

  /** {@code [__source_row_id, projected...]} of the filtered source. */
  static Dataset<Row> project(Dataset<Row> source, ChunkerDefinition def) {
    Dataset<Row> filtered = def.filter() == null ? source : source.where(def.filter());
    List<Column> cols = new ArrayList<>();
    cols.add(functions.col("_rowid").as(ChunkerLayout.SOURCE_ROW_ID));
    if (def.projection().isEmpty()) {
      for (String c : source.columns()) {
        cols.add(functions.col(c));
      }
    } else {
      for (SourceQuery.OutputColumn c : def.projection()) {
        cols.add(functions.expr(c.expr()).as(c.name()));
      }
    }
    return filtered.select(cols.toArray(new Column[0]));
  }

  static ChunkerLayout layout(Dataset<Row> source, ChunkerDefinition def) {
    StructType full = project(source, def).schema();
    StructType projected = new StructType(java.util.Arrays.copyOfRange(full.fields(), 1,
        full.fields().length));
    return ChunkerLayout.of(projected, def.function().inputColumns(),
        def.function().outputSchema(), def.inheritInputColumns());
  }
}
