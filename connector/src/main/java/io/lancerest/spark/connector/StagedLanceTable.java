package io.lancerest.spark.connector;

import java.util.Map;
import org.apache.spark.sql.types.StructType;
import org.lance.spark.LancePositionDeltaDataset;
import org.lance.spark.LanceSparkReadOptions;
import org.lance.spark.write.StagedCommit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * lance-spark's staged dataset plus the two things a catalog-backed CTAS / RTAS needs on top: a
 * staged create that fails leaves no directory behind, and the catalog hears about the outcome.
 *
 * <p>lance-spark's own abort only closes the dataset (and deregisters through a namespace it
 * holds), which would leave the empty dataset we create at staging time, plus any fragments the
 * failed job wrote, under the table's location.
 */
final class StagedLanceTable extends LancePositionDeltaDataset {

  private static final Logger LOG = LoggerFactory.getLogger(StagedLanceTable.class);

  private final transient TableHandle handle;
  private final transient boolean createdDataset;
  private final transient Map<String, String> configAfterCommit;
  private final transient StagedTableListener listener;

  StagedLanceTable(
      LanceSparkReadOptions readOptions,
      StructType schema,
      TableHandle handle,
      StagedCommit stagedCommit,
      String fileFormatVersion,
      boolean createdDataset,
      Map<String, String> configAfterCommit,
      StagedTableListener listener) {
    super(
        readOptions,
        schema,
        handle.storageOptions(),
        handle.namespaceImpl(),
        handle.namespaceProperties(),
        handle.managedVersioning(),
        stagedCommit,
        fileFormatVersion);
    this.handle = handle;
    this.createdDataset = createdDataset;
    this.configAfterCommit = configAfterCommit;
    this.listener = listener == null ? StagedTableListener.NONE : listener;
  }

  @Override
  public void commitStagedChanges() {
    super.commitStagedChanges();
    if (!configAfterCommit.isEmpty()) {
      // Overwrite keeps the previous config; RTAS properties land in a follow-up commit because
      // lance-spark's StagedCommit offers no hook to put them into the data commit.
      LanceTableAlterations.setProperties(handle, configAfterCommit);
    }
    long version = LanceTables.latestVersion(handle);
    LOG.info("Committed staged change of table {} at version {}", handle.displayName(), version);
    listener.committed(handle, version);
  }

  @Override
  public void abortStagedChanges() {
    try {
      super.abortStagedChanges();
    } finally {
      // Spark also aborts when commitStagedChanges (or our listener) failed after the data
      // commit: for a staged create the table never became visible, so removing it is right.
      if (createdDataset) {
        LOG.info(
            "Aborting staged create of table {}: removing {}",
            handle.displayName(),
            handle.location());
        LanceTables.purge(handle.location(), handle.storageOptions());
      }
      listener.aborted(handle);
    }
  }

  boolean createsDataset() {
    return createdDataset;
  }
}
