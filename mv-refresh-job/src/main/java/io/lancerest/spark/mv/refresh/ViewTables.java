package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.layout.ErrorsTable;
import java.util.Map;
import java.util.Objects;

/**
 * Where a view and its source live, resolved once for a statement and taken by every step of a
 * kind's refresh: the view's name as users write it, each Lance table as a {@link LanceLocation}
 * (its storage options with the one provider that renews them), and the view's errors table.
 *
 * @param viewName shown in errors, logs, job records and Spark job descriptions ({@code
 *     catalog.ns.v}); {@code null} uses the view's location
 * @param errorsTableUri the Lance table that receives skipped work items; {@code null} puts it
 *     next to the view ({@code <view>__errors.lance}, {@link ErrorsTable#nextTo})
 * @param viewProperties the view table's properties as its namespace server keeps them (the
 *     maintenance overrides among them); empty when the server keeps none
 */
public record ViewTables(String viewName, LanceLocation view, LanceLocation source,
    String errorsTableUri, Map<String, String> viewProperties) {
  public ViewTables {
    Objects.requireNonNull(view, "view");
    Objects.requireNonNull(source, "source");
    viewName = viewName == null ? view.uri() : viewName;
    errorsTableUri = errorsTableUri == null ? ErrorsTable.nextTo(view.uri()) : errorsTableUri;
    viewProperties = viewProperties == null ? Map.of() : Map.copyOf(viewProperties);
  }

  /** A view and its source given by location and storage options. */
  public ViewTables(String viewName, String viewUri, Map<String, String> viewStorageOptions,
      String sourceUri, Map<String, String> sourceStorageOptions, String errorsTableUri,
      Map<String, String> viewProperties) {
    this(viewName, LanceLocation.of(viewUri, viewStorageOptions),
        LanceLocation.of(sourceUri, sourceStorageOptions), errorsTableUri, viewProperties);
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

  /** The errors table, under the view's credentials. */
  public LanceLocation errors() {
    return view.sibling(errorsTableUri);
  }

  public String viewUri() {
    return view.uri();
  }

  public Map<String, String> viewStorageOptions() {
    return view.storageOptions();
  }

  public String sourceUri() {
    return source.uri();
  }

  public Map<String, String> sourceStorageOptions() {
    return source.storageOptions();
  }

  /** Storage options hold credentials: only their keys are shown. */
  @Override
  public String toString() {
    return "ViewTables{" + viewName + " at " + view + "; source " + source + "; errors "
        + errorsTableUri + "}";
  }
}
