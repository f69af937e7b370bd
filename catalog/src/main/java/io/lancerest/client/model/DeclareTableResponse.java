package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code DeclareTableResponse}. Response for declaring a table. */
public record DeclareTableResponse(
    String transactionId,
    String location,
    Map<String, String> storageOptions,
    Map<String, String> properties,
    Boolean managedVersioning,
    Map<String, String> context) {
  /** {@code storageOptions} may hold vended credentials, so only their count is shown. */
  @Override
  public String toString() {
    return "DeclareTableResponse{transactionId=" + transactionId
        + ", location=" + location
        + ", storageOptions="
        + (storageOptions == null ? "none" : storageOptions.size() + " entries (hidden)")
        + ", properties=" + properties
        + ", managedVersioning=" + managedVersioning + '}';
  }
}
