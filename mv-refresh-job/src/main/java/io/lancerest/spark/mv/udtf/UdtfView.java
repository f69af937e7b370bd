package io.lancerest.spark.mv.udtf;

import java.util.Map;
import java.util.Objects;

/**
 * The view table a UDTF refresh rebuilds.
 *
 * @param name how the view is named to users (logs, Spark job descriptions, error records),
 *     e.g. {@code ns.v}
 * @param location the view's Lance table; it exists and has the UDTF's output schema
 */
public record UdtfView(String name, String location, Map<String, String> storageOptions) {
  public UdtfView {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(location, "location");
    storageOptions = storageOptions == null ? Map.of() : Map.copyOf(storageOptions);
  }

  /** {@code <view>__errors.lance} next to the view's own directory. */
  String defaultErrorsTable() {
    return io.lancerest.spark.mv.ErrorsTable.nextTo(location);
  }
}
