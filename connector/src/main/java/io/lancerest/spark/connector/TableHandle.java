package io.lancerest.spark.connector;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Everything the data path needs to know about one catalog table, as plain values taken from the
 * namespace's DescribeTable answer.
 *
 * <p>Storage options may carry vended credentials and namespace properties may carry auth headers,
 * so {@link #toString()} prints only their keys.
 *
 * @param tableId the table's identifier in the namespace (namespace parts, then the table name)
 * @param location the dataset URI
 * @param storageOptions object-store options for the dataset, possibly with vended credentials
 * @param version the version DescribeTable resolved, or {@code null} for "latest"
 * @param managedVersioning whether the namespace, not the dataset, decides which version is
 *     current; such tables must only be committed through the namespace
 * @param properties the table properties known to the catalog
 * @param namespaceImpl how executors rebuild the namespace client to refresh credentials (for
 *     example {@code "rest"}), or {@code null} when they should not
 * @param namespaceProperties the properties for that client ({@code uri}, {@code header.*})
 * @param scanBatchRows rows per batch of the table's scans, or {@code null} to size them by the
 *     table's columns ({@link io.lancerest.spark.connector.ScanBatchRows})
 */
public record TableHandle(
    List<String> tableId,
    String location,
    Map<String, String> storageOptions,
    Long version,
    boolean managedVersioning,
    Map<String, String> properties,
    String namespaceImpl,
    Map<String, String> namespaceProperties,
    Integer scanBatchRows) {

  public TableHandle {
    tableId = List.copyOf(Objects.requireNonNull(tableId, "tableId"));
    Objects.requireNonNull(location, "location");
    if (location.isBlank()) {
      throw new IllegalArgumentException("Table " + tableId + " has no location");
    }
    storageOptions = immutable(storageOptions);
    properties = immutable(properties);
    namespaceProperties = immutable(namespaceProperties);
  }

  public static Builder builder(List<String> tableId, String location) {
    return new Builder(tableId, location);
  }

  /** Dotted name for messages: the table id, or the location for path-only tables. */
  public String displayName() {
    return tableId.isEmpty() ? location : String.join(".", tableId);
  }

  /** The same table pinned to another version (or to latest with {@code null}). */
  public TableHandle withVersion(Long newVersion) {
    return new TableHandle(
        tableId,
        location,
        storageOptions,
        newVersion,
        managedVersioning,
        properties,
        namespaceImpl,
        namespaceProperties,
        scanBatchRows);
  }

  public Builder toBuilder() {
    return new Builder(tableId, location)
        .storageOptions(storageOptions)
        .version(version)
        .managedVersioning(managedVersioning)
        .properties(properties)
        .namespace(namespaceImpl, namespaceProperties)
        .scanBatchRows(scanBatchRows);
  }

  @Override
  public String toString() {
    // Values of storage options and namespace properties are secrets (credentials, tokens).
    return "TableHandle{id="
        + tableId
        + ", location="
        + location
        + ", version="
        + (version == null ? "latest" : version)
        + ", managedVersioning="
        + managedVersioning
        + ", storageOptionKeys="
        + storageOptions.keySet()
        + ", properties="
        + properties
        + ", namespaceImpl="
        + namespaceImpl
        + ", namespacePropertyKeys="
        + namespaceProperties.keySet()
        + (scanBatchRows == null ? "" : ", scanBatchRows=" + scanBatchRows)
        + "}";
  }

  private static Map<String, String> immutable(Map<String, String> map) {
    return map == null || map.isEmpty()
        ? Map.of()
        : Collections.unmodifiableMap(new LinkedHashMap<>(map));
  }

  /** Builder for the many optional parts of a handle. */
  public static final class Builder {
    private final List<String> tableId;
    private final String location;
    private Map<String, String> storageOptions = Map.of();
    private Long version;
    private boolean managedVersioning;
    private Map<String, String> properties = Map.of();
    private String namespaceImpl;
    private Map<String, String> namespaceProperties = Map.of();
    private Integer scanBatchRows;

    private Builder(List<String> tableId, String location) {
      this.tableId = tableId;
      this.location = location;
    }

    public Builder storageOptions(Map<String, String> value) {
      this.storageOptions = value;
      return this;
    }

    public Builder version(Long value) {
      this.version = value;
      return this;
    }

    public Builder managedVersioning(boolean value) {
      this.managedVersioning = value;
      return this;
    }

    public Builder properties(Map<String, String> value) {
      this.properties = value;
      return this;
    }

    /** How executors reach the namespace again, e.g. {@code ("rest", {uri, header.*})}. */
    public Builder namespace(String impl, Map<String, String> props) {
      this.namespaceImpl = impl;
      this.namespaceProperties = props;
      return this;
    }

    /** Rows per scan batch; {@code null} sizes them by the table's columns. */
    public Builder scanBatchRows(Integer value) {
      this.scanBatchRows = value;
      return this;
    }

    public TableHandle build() {
      return new TableHandle(
          tableId,
          location,
          storageOptions,
          version,
          managedVersioning,
          properties,
          namespaceImpl,
          namespaceProperties,
          scanBatchRows);
    }
  }
}
