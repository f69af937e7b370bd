package io.lancerest.spark.connector.search.scan;

import java.io.Serializable;
import java.util.Map;
import org.lance.Dataset;
import org.lance.spark.LanceSparkReadOptions;
import org.lance.spark.internal.LanceDatasetCache;

/**
 * Where a search task finds its dataset: the catalog table's read options pinned to the planned
 * version, with its storage options (vended credentials) and namespace connection, which renews
 * them. A task opens it through lance-spark's dataset cache, as the table's scans do.
 */
record SearchSource(LanceSparkReadOptions readOptions, Map<String, String> initialStorageOptions,
    String namespaceImpl, Map<String, String> namespaceProperties) implements Serializable {

  /** The dataset, shared with the table's other reads in this JVM: not to be closed. */
  Dataset dataset() {
    return LanceDatasetCache.getDataset(readOptions, initialStorageOptions, namespaceImpl,
        namespaceProperties).getDataset();
  }

  /** When the vended credentials the search was planned with expire, or null. */
  Long credentialsExpireAt() {
    return initialStorageOptions == null ? null
        : io.lancerest.spark.connector.CredentialRefresh.expiresAt(initialStorageOptions);
  }

  /** Storage options and namespace properties may hold secrets: print neither. */
  @Override
  public String toString() {
    return "SearchSource[" + readOptions.getDatasetUri() + " version "
        + readOptions.getVersion() + "]";
  }
}
