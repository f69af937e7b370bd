package io.lancerest.spark.mv.result;

import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.definition.ViewState;
import io.lancerest.spark.mv.indexes.IndexListing;
import java.util.List;

/**
 * What {@code DESCRIBE MATERIALIZED VIEW} shows.
 *
 * @param viewId the view's identifier
 * @param definition what the view computes
 * @param state last refreshed source version, base version, last job
 * @param mode {@code server} (the server's materialized-view endpoints) or {@code client}
 *     (definition stored on the view table, refreshed by this engine)
 * @param versionsManaged whether the namespace server manages the versions of the view's table
 *     (DescribeTable's {@code managed_versioning}), which a client-managed refresh refuses
 * @param indexes the indexes of the view's table, read with the definition (the same version)
 */
public record ViewDescription(List<String> viewId, ViewDefinition definition, ViewState state,
    String mode, boolean versionsManaged, IndexListing indexes) {
  /** A view described by an engine that does not list its indexes. */
  public ViewDescription(List<String> viewId, ViewDefinition definition, ViewState state,
      String mode, boolean versionsManaged) {
    this(viewId, definition, state, mode, versionsManaged, IndexListing.NOT_SUPPORTED);
  }

  /** A view whose table's versions the server does not manage, its indexes not listed. */
  public ViewDescription(List<String> viewId, ViewDefinition definition, ViewState state,
      String mode) {
    this(viewId, definition, state, mode, false);
  }
}
