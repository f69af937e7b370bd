package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.mv.layout.ErrorsTable;
import java.util.Map;
import java.util.Objects;

/**
 * Where a view and its source live, as every kind's refresh takes them: the view's name as users
 * write it, each Lance table with the storage options that open it, and the view's errors table.
 *
 * @param viewName shown in errors, logs, job records and Spark job descriptions ({@code
 *     catalog.ns.v}); {@code null} uses the view's location
 * @param errorsTableUri the Lance table that receives skipped work items; {@code null} puts it
 *     next to the view ({@code <view>__errors.lance}, {@link ErrorsTable#nextTo})
 * @param viewProperties the view table's properties as its namespace server keeps them (the
 *     maintenance overrides among them); empty when the server keeps none
 */
public record ViewTables(String viewName, String viewUri, Map<String, String> viewStorageOptions,
    String sourceUri, Map<String, String> sourceStorageOptions, String errorsTableUri,
    Map<String, String> viewProperties) {
  public ViewTables {
    Objects.requireNonNull(viewUri, "viewUri");
    Objects.requireNonNull(sourceUri, "sourceUri");
    viewStorageOptions = viewStorageOptions == null ? Map.of() : Map.copyOf(viewStorageOptions);
    sourceStorageOptions = sourceStorageOptions == null ? Map.of()
        : Map.copyOf(sourceStorageOptions);
    viewName = viewName == null ? viewUri : viewName;
    errorsTableUri = errorsTableUri == null ? ErrorsTable.nextTo(viewUri) : errorsTableUri;
    viewProperties = viewProperties == null ? Map.of() : Map.copyOf(viewProperties);
  }

  /** Storage options hold credentials: only their keys are shown. */
  @Override
  public String toString() {
    return "ViewTables{" + viewName + " at " + viewUri + ", storage options "
        + viewStorageOptions.keySet() + "; source " + sourceUri + ", storage options "
        + sourceStorageOptions.keySet() + "; errors " + errorsTableUri + "}";
  }

  /** A view and its source, with the errors table given. */
  public ViewTables(String viewName, String viewUri, Map<String, String> viewStorageOptions,
      String sourceUri, Map<String, String> sourceStorageOptions, String errorsTableUri) {
    this(viewName, viewUri, viewStorageOptions, sourceUri, sourceStorageOptions, errorsTableUri,
        null);
  }

  /** A view and its source (errors table next to the view). */
  public ViewTables(String viewName, String viewUri, Map<String, String> viewStorageOptions,
      String sourceUri, Map<String, String> sourceStorageOptions) {
    this(viewName, viewUri, viewStorageOptions, sourceUri, sourceStorageOptions, null, null);
  }
}
