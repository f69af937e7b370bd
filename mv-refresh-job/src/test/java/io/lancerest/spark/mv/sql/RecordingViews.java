package io.lancerest.spark.mv.sql;

import io.lancerest.spark.mv.CreateViewRequest;
import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.definition.ViewState;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.indexes.IndexListing;
import io.lancerest.spark.mv.indexes.IndexSummary;
import io.lancerest.spark.mv.layout.GenevaLayout;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import io.lancerest.spark.mv.result.ViewDescription;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.spark.sql.SparkSession;

/** A fake API that records each call as "catalog:operation:args" and answers canned values. */
public final class RecordingViews implements MaterializedViews, MaterializedViews.Factory {
  static final List<String> CALLS = new CopyOnWriteArrayList<>();
  private final String catalog;

  public RecordingViews() {
    this("?");
  }

  private RecordingViews(String catalog) {
    this.catalog = catalog;
  }

  @Override
  public MaterializedViews forCatalog(SparkSession spark, String catalogName) {
    return new RecordingViews(catalogName);
  }

  @Override
  public RefreshResult create(CreateViewRequest r) {
    CALLS.add(catalog + ":create:" + r);
    return r.withData() ? new RefreshResult("job-1", RefreshResult.JobStatus.DONE, r.kind(), 7L,
        10, 0, 0, 5) : null;
  }

  @Override
  public RefreshResult refresh(List<String> viewId, RefreshOptions options,
      io.lancerest.spark.mv.RefreshListener listener) {
    CALLS.add(catalog + ":refresh:" + viewId + ":" + options);
    if (viewId.contains("missing")) {
      throw new MaterializedViewNotFoundException("View " + viewId + " does not exist");
    }
    return new RefreshResult("job-2", RefreshResult.JobStatus.PARTIAL,
        MaterializedViewKind.CHUNKER, 12L, 30, 4, 2, 1500);
  }

  @Override
  public RefreshPlan explainRefresh(List<String> viewId, RefreshOptions options) {
    CALLS.add(catalog + ":explain:" + viewId + ":" + options);
    return new RefreshPlan(String.join(".", viewId), MaterializedViewKind.QUERY,
        RefreshPlan.Mode.INCREMENTAL, "source changed", 3L, 5L, 10, List.of(8, 9), 2000, 100,
        4L, 20L, RefreshPlan.Write.DRIVER, null, "");
  }

  @Override
  public boolean drop(List<String> viewId, boolean ifExists) {
    CALLS.add(catalog + ":drop:" + viewId + ":" + ifExists);
    return true;
  }

  /**
   * View {@code v} has two indexes, {@code w} none, {@code broken} indexes lance-core cannot
   * list; every other view is described without its indexes, as an engine that does not list
   * them describes it.
   */
  @Override
  public ViewDescription describe(List<String> viewId) {
    CALLS.add(catalog + ":describe:" + viewId);
    SourceQuery q = SourceQuery.of(List.of("ns", "src"), List.of("ns"),
        List.of(new SourceQuery.OutputColumn("id", "id")), "id > 3", null);
    ViewDefinition def = new ViewDefinition(viewId, MaterializedViewKind.QUERY, q, null, false);
    ViewState state = new ViewState(9L, 9L, "{\"job_id\":\"job-2\"}");
    IndexListing indexes = switch (viewId.get(viewId.size() - 1)) {
      case "v" -> new IndexListing(List.of(
          new IndexSummary("vec_idx", "vector", List.of("vec"), 3, 600, 1, 50, 2),
          new IndexSummary("id_idx", "btree", List.of("id"), 4, 650, 0, 0, 1)), null);
      case "w" -> new IndexListing(List.of(), null);
      case "broken" -> new IndexListing(List.of(), "Not found: s3://***@b/v.lance/_indices/x");
      default -> null;
    };
    return indexes == null ? new ViewDescription(viewId, def, state, "client")
        : new ViewDescription(viewId, def, state, "client", false, indexes);
  }

  @Override
  public List<List<String>> list(List<String> namespace) {
    CALLS.add(catalog + ":list:" + namespace);
    return List.of(List.of("ns", "a"), List.of("ns", "b"));
  }

  static String layoutKey() {
    return GenevaLayout.VERSION;
  }
}
