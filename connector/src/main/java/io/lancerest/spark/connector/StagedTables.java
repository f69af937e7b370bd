package io.lancerest.spark.connector;

import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.lance.Dataset;
import org.lance.spark.write.StagedCommit;

/**
 * Stages CTAS and RTAS: a table whose query rows commit to the dataset in one Overwrite at
 * {@code commitStagedChanges}, through lance-spark's staged commit.
 */
final class StagedTables {
  private StagedTables() {}

  /** See {@link LanceTables#stageCreate}. */
  static StagedTable stageCreate(
      TableHandle handle,
      StructType schema,
      Map<String, String> properties,
      boolean storePropertiesInDataset,
      String catalogName,
      StagedTableListener listener) {
    Map<String, String> props = properties == null ? Map.of() : properties;
    TableHandle latest = handle.withVersion(null);
    if (handle.managedVersioning()) {
      Schema arrow = LanceDatasets.arrowSchema(schema, props);
      StagedCommit staged =
          StagedCommit.forNewTable(
              arrow,
              handle.location(),
              handle.storageOptions(),
              TableReads.namespace(handle),
              handle.tableId(),
              true);
      return new StagedLanceTable(
          TableReads.readOptions(latest, null, catalogName),
          LanceArrowUtils.fromArrowSchema(arrow),
          latest,
          staged,
          props.get(LanceTables.FILE_FORMAT_VERSION),
          false,
          Map.of(),
          listener);
    }
    LanceDatasets.createDataset(latest, schema, props, storePropertiesInDataset);
    try {
      return stageOverExisting(latest, props, Map.of(), true, catalogName, listener, null);
    } catch (RuntimeException e) {
      LanceDatasets.purge(handle.location(), handle.storageOptions());
      throw e;
    }
  }

  /** See {@link LanceTables#stageReplace}. */
  static StagedTable stageReplace(
      TableHandle handle,
      StructType schema,
      Map<String, String> properties,
      boolean storePropertiesInDataset,
      String catalogName,
      StagedTableListener listener) {
    Map<String, String> props = properties == null ? Map.of() : properties;
    TableHandle latest = handle.withVersion(null);
    Map<String, String> config = storePropertiesInDataset ? LanceDatasets.datasetConfig(props) : Map.of();
    if (!config.isEmpty()) {
      LanceTableAlterations.requireUnmanaged(latest, "set table properties");
    }
    return stageOverExisting(latest, props, config, false, catalogName, listener, schema);
  }

  private static StagedTable stageOverExisting(
      TableHandle handle,
      Map<String, String> props,
      Map<String, String> configAfterCommit,
      boolean createdDataset,
      String catalogName,
      StagedTableListener listener,
      StructType newSchema) {
    // newSchema null: keep the dataset's schema (staged create, whose dataset was just made).
    // StagedCommit keeps this dataset open until commit or abort and closes it then.
    Dataset ds = DatasetOpener.openAt(handle, null);
    try {
      Schema arrow = newSchema == null ? ds.getSchema() : LanceDatasets.arrowSchema(newSchema, props);
      String fileFormat = props.getOrDefault(LanceTables.FILE_FORMAT_VERSION, ds.getLanceFileFormatVersion());
      StagedCommit staged =
          StagedCommit.forExistingTable(
              ds,
              arrow,
              handle.storageOptions(),
              handle.managedVersioning() ? TableReads.namespace(handle) : null,
              handle.tableId(),
              handle.managedVersioning());
      return new StagedLanceTable(
          TableReads.readOptions(handle, null, catalogName),
          LanceArrowUtils.fromArrowSchema(arrow),
          handle,
          staged,
          fileFormat,
          createdDataset,
          configAfterCommit,
          listener);
    } catch (RuntimeException e) {
      ds.close();
      throw e;
    }
  }
}
