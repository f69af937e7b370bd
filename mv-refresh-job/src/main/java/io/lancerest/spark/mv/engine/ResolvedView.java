package io.lancerest.spark.mv.engine;

import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.definition.ViewState;
import io.lancerest.spark.mv.engine.CatalogBinding.TableLocation;
import java.util.List;

/**
 * A view as one statement resolved it, made once (by {@link StoredViews}, or by CREATE from what
 * it has just written) and passed to every step of the statement, none of which looks the view
 * up again.
 *
 * @param name the view as users write it ({@code catalog.ns.v}), for messages, logs and jobs
 * @param table its table: catalog-relative identifier, location, storage options with their
 *     credential provider, and the properties the server keeps
 * @param definition the stored definition; its {@code viewId} is the identifier as the server
 *     names it
 * @param clientManaged whether this client refreshes it (else the server that created it)
 */
record ResolvedView(String name, TableLocation table, ViewDefinition definition, ViewState state,
    boolean clientManaged) {
  /** The identifier relative to the catalog, as statements name it. */
  List<String> relativeId() {
    return table.relativeId();
  }
}
