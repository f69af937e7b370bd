package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code CreateTableResponse}. */
public record CreateTableResponse(
    String transactionId,
    String location,
    Long version,
    Map<String, String> storageOptions,
    Map<String, String> properties,
    Map<String, String> context) {
  /** {@code storageOptions} may hold vended credentials, so only their count is shown. */
  @Override
  public String toString() {
    return "CreateTableResponse{transactionId=" + transactionId
        + ", location=" + location
        + ", version=" + version
        + ", storageOptions="
        + (storageOptions == null ? "none" : storageOptions.size() + " entries (hidden)")
        + ", properties=" + properties + '}';
  }
}
