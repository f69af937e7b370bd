package io.lancerest.spark.catalog;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.error.UnsupportedOperationByServerException;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DescribeTableResponse;
import io.lancerest.client.model.UpdateTableSchemaMetadataRequest;
import io.lancerest.spark.connector.LanceTableAlterations;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.lance.Dataset;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes table properties where they live: on the server through UpdateTableSchemaMetadata while
 * the server has it, otherwise in the dataset config of a table whose versions it does not manage.
 */
final class TablePropertyWrites {
  // Logged under the catalog's table operations, the category users' log configs name.
  private static final Logger LOG = LoggerFactory.getLogger(TableOperations.class);

  private final LanceRestClient client;
  /** Null until the server has answered UpdateTableSchemaMetadata once. */
  private volatile Boolean serverSchemaMetadata;

  TablePropertyWrites(LanceRestClient client) {
    this.client = client;
  }

  /** After an RTAS commit: the table's properties become exactly {@code props}. */
  void replace(List<String> id, DescribedTable e, boolean serverProps, Map<String, String> props) {
    if (serverProps && !Boolean.FALSE.equals(serverSchemaMetadata)) {
      try {
        client.updateTableSchemaMetadata(new UpdateTableSchemaMetadataRequest().id(id)
            .metadata(props));
        serverSchemaMetadata = true;
        return;
      } catch (UnsupportedOperationByServerException ex) {
        serverSchemaMetadata = false;
      }
    }
    if (e.handle.managedVersioning()) {
      if (!props.isEmpty()) {
        e.requireUnmanaged(id, "replace table properties");
      }
      return;
    }
    try (Dataset ds = e.open(null)) {
      Map<String, String> current = ds.getConfig();
      Map<String, String> next = TableProperties.replacedDatasetConfig(current,
          TableProperties.datasetProps(props));
      if (!next.equals(current)) {
        // lance-core's updateConfig replaces the whole config: one commit, no stale keys.
        ds.updateConfig(next);
      }
    }
  }

  /** ALTER TABLE … SET / UNSET TBLPROPERTIES (and COMMENT ON TABLE). */
  void alter(List<String> id, DescribedTable e, Map<String, String> set, Set<String> unset) {
    if (!Boolean.FALSE.equals(serverSchemaMetadata)) {
      try {
        // The operation replaces the whole map: start from what the server holds now.
        DescribeTableResponse d = client.describeTable(
            new DescribeTableRequest().id(id).loadDetailedMetadata(true));
        Map<String, String> next = new LinkedHashMap<>();
        if (d.getMetadata() != null) {
          next.putAll(d.getMetadata());
        } else if (d.getProperties() != null) {
          next.putAll(d.getProperties());
        }
        next.putAll(set);
        unset.forEach(next::remove);
        client.updateTableSchemaMetadata(new UpdateTableSchemaMetadataRequest().id(id)
            .metadata(next));
        serverSchemaMetadata = true;
        return;
      } catch (UnsupportedOperationByServerException ex) {
        serverSchemaMetadata = false;
        LOG.info("Server lacks UpdateTableSchemaMetadata; table properties go to the dataset");
      }
    }
    e.requireUnmanaged(id, "change table properties");
    Map<String, String> cfg = TableProperties.toDatasetConfig(set);
    LanceTableAlterations.setProperties(e.handle, cfg);
    Set<String> keys = new HashSet<>();
    unset.forEach(k -> keys.add(TableProperties.datasetConfigKey(k)));
    LanceTableAlterations.unsetProperties(e.handle, keys);
  }
}
