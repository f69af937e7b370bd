package io.lancerest.spark.mv.result;

import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.definition.ViewState;
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
 */
public record ViewDescription(List<String> viewId, ViewDefinition definition, ViewState state,
    String mode, boolean versionsManaged) {
  /** A view whose table's versions the server does not manage. */
  public ViewDescription(List<String> viewId, ViewDefinition definition, ViewState state,
      String mode) {
    this(viewId, definition, state, mode, false);
  }
}
