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
 */
public record ViewDescription(List<String> viewId, ViewDefinition definition, ViewState state,
    String mode) {}
