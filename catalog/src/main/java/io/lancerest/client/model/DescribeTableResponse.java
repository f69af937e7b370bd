package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * DescribeTable's answer. {@code storageOptions} may hold vended credentials: it is left out of
 * {@link #toString()}.
 */
public record DescribeTableResponse(
    String table, List<String> namespace, Long version, String location, String tableUri,
    JsonArrowSchema schema, Map<String, String> storageOptions, TableBasicStats stats,
    Map<String, String> metadata, Map<String, String> properties, Boolean managedVersioning,
    Boolean isOnlyDeclared, Map<String, String> context) {

  @Override
  public String toString() {
    return "DescribeTableResponse{table=" + table + ", namespace=" + namespace + ", version="
        + version + ", location=" + location + ", properties=" + properties
        + ", managedVersioning=" + managedVersioning + ", storageOptions="
        + (storageOptions == null ? "none" : storageOptions.size() + " entries (hidden)") + '}';
  }
}
