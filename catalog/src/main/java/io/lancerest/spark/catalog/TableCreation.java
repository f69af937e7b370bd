package io.lancerest.spark.catalog;

import io.lancerest.client.Identifiers;
import io.lancerest.client.LanceRestClient;
import io.lancerest.client.error.ErrorCode;
import io.lancerest.client.error.ErrorDetails;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.client.error.TableAlreadyExistsException;
import io.lancerest.client.model.DeclareTableRequest;
import io.lancerest.client.model.DeclareTableResponse;
import io.lancerest.client.model.DeregisterTableRequest;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DescribeTableResponse;
import io.lancerest.client.spec.Operation;
import io.lancerest.spark.connector.LanceTableException;
import io.lancerest.spark.connector.LanceTables;
import io.lancerest.spark.connector.StagedTableListener;
import io.lancerest.spark.connector.TableHandle;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates tables (CREATE TABLE, CTAS, RTAS): declares them on the server, has the connector write
 * or stage their datasets, and leaves nothing behind when that fails.
 */
final class TableCreation {
  // Logged under the catalog's table operations, the category users' log configs name.
  private static final Logger LOG = LoggerFactory.getLogger(TableOperations.class);

  private final LanceRestClient client;
  private final CatalogOptions options;
  private final String catalogName;
  private final DescribedTables described;
  private final TableLoader loader;
  private final TablePropertyWrites properties;

  TableCreation(LanceRestClient client, CatalogOptions options, String catalogName,
      DescribedTables described, TableLoader loader, TablePropertyWrites properties) {
    this.client = client;
    this.options = options;
    this.catalogName = catalogName;
    this.described = described;
    this.loader = loader;
    this.properties = properties;
  }

  /** Properties of a new table: table-default.* under the statement's, checked. */
  Map<String, String> newTableProperties(List<String> id, Map<String, String> statement) {
    Map<String, String> merged = new LinkedHashMap<>(options.tableDefaults());
    merged.putAll(statement);
    String provider = merged.remove(TableCatalog.PROP_PROVIDER);
    if (provider != null && !provider.equalsIgnoreCase(TableProperties.PROVIDER_LANCE)) {
      throw new IllegalArgumentException("Cannot create table " + Identifiers.display(id)
          + " USING " + provider + ": catalog '" + catalogName + "' only holds Lance tables; "
          + "leave out USING or write USING lance");
    }
    // Spark adds these itself; the namespace server decides ownership and external-ness.
    merged.remove(TableCatalog.PROP_OWNER);
    merged.remove(TableCatalog.PROP_EXTERNAL);
    merged.remove(TableCatalog.PROP_IS_MANAGED_LOCATION);
    for (String k : merged.keySet()) {
      if (TableProperties.isReserved(k) && !k.equals(TableCatalog.PROP_LOCATION)) {
        throw TableProperties.reserved(id, k);
      }
    }
    return merged;
  }

  /** A declared table whose dataset is not written yet. */
  private record Declared(TableHandle handle, boolean serverKeepsProperties) {}

  private Declared declare(List<String> id, Map<String, String> props) {
    Map<String, String> userProps = new LinkedHashMap<>(props);
    String location = userProps.remove(TableCatalog.PROP_LOCATION);
    DeclareTableRequest request = new DeclareTableRequest().id(id)
        .location(location).vendCredentials(true).properties(userProps);
    DeclareTableResponse r;
    try {
      r = client.declareTable(request);
    } catch (RuntimeException e) {
      if (!OutcomeUnknown.is(e)) {
        throw e;
      }
      return reconcileDeclare(id, request, e);
    }
    if (r.getLocation() == null || r.getLocation().isBlank()) {
      deregisterQuietly(id);
      throw new IllegalStateException("The server declared table " + Identifiers.display(id)
          + " without giving it a location; the catalog cannot write its data");
    }
    return new Declared(
        described.handle(id, r.getLocation(), r.getStorageOptions(),
            Boolean.TRUE.equals(r.getManagedVersioning()), r.getProperties()),
        r.getProperties() != null);
  }

  /**
   * DeclareTable's outcome is unknown: re-read. Not there: it was not applied, so declaring once
   * more cannot apply it twice. Declared without data: ours (or a racing creator's, whose own
   * dataset create then fails cleanly), so go on and write it. With data: someone else's table.
   */
  private Declared reconcileDeclare(List<String> id, DeclareTableRequest request,
      RuntimeException lost) {
    DescribeTableResponse d;
    try {
      d = client.describeTable(new DescribeTableRequest().id(id).vendCredentials(true));
    } catch (NotFoundException notApplied) {
      OutcomeUnknown.reconciled("DeclareTable", id, "not declared, declaring again", lost);
      DeclareTableResponse r = client.declareTable(request);
      return new Declared(described.handle(id, r.getLocation(), r.getStorageOptions(),
          Boolean.TRUE.equals(r.getManagedVersioning()), r.getProperties()),
              r.getProperties() != null);
    }
    if (d.getLocation() == null || d.getLocation().isBlank()) {
      throw lost;
    }
    TableHandle h = described.handle(id, d.getLocation(), d.getStorageOptions(),
        Boolean.TRUE.equals(d.getManagedVersioning()), d.getProperties());
    if (LanceTables.datasetExists(h.location(), h.storageOptions())) {
      OutcomeUnknown.reconciled("DeclareTable", id, "a table with data exists", lost);
      throw othersTable(id, lost);
    }
    OutcomeUnknown.reconciled("DeclareTable", id, "declared, going on", lost);
    return new Declared(h, d.getProperties() != null);
  }

  /** The dataset create found data at the location: someone else's, never to be cleaned up. */
  private static boolean foundOthersData(Exception e) {
    return e instanceof LanceTableException lte
        && lte.reason() == LanceTableException.Reason.ALREADY_EXISTS;
  }

  private static TableAlreadyExistsException othersTable(List<String> id, Exception cause) {
    return new TableAlreadyExistsException(new ErrorDetails("table already exists: it was "
        + "created concurrently, with data this statement did not write (left untouched)",
        "Choose another name, or drop the existing table first", ErrorCode.TABLE_ALREADY_EXISTS,
        0, Operation.DECLARE_TABLE, Identifiers.display(id), null, null), cause);
  }

  Table create(List<String> id, StructType schema, Map<String, String> statementProps,
      String displayName) {
    Map<String, String> props = newTableProperties(id, statementProps);
    Declared declared = declare(id, props);
    try {
      LanceTables.createDataset(declared.handle, schema, TableProperties.datasetProps(props),
          !declared.serverKeepsProperties);
    } catch (Exception e) {
      // Exception, not RuntimeException: lance-core's native calls also throw the checked
      // java.io.IOException undeclared (an object store it cannot reach), and that failure
      // must not leave the declaration behind either. Rethrown as it came.
      if (foundOthersData(e)) {
        throw othersTable(id, e);
      }
      // Nothing may stay behind: not the declaration, not a half-written dataset.
      deregisterQuietly(id);
      try {
        LanceTables.purge(declared.handle.location(), declared.handle.storageOptions());
      } catch (Exception cleanup) {
        e.addSuppressed(cleanup); // the create's own failure is the one to report
      }
      throw e;
    } finally {
      described.invalidate(id);
    }
    return loader.load(id, displayName);
  }

  StagedTable stageCreate(List<String> id, StructType schema, Map<String, String> statementProps) {
    Map<String, String> props = newTableProperties(id, statementProps);
    Declared declared = declare(id, props);
    described.invalidate(id);
    try {
      return LanceTables.stageCreate(declared.handle, schema, TableProperties.datasetProps(props),
          !declared.serverKeepsProperties, catalogName, listener(id, true));
    } catch (RuntimeException e) {
      if (foundOthersData(e)) {
        throw othersTable(id, e);
      }
      deregisterQuietly(id);
      throw e;
    }
  }

  /**
   * RTAS. The replaced table's properties are the statement's (plus table-default.*), not a merge
   * with the old ones: once the data has committed, the server's map or the dataset config is
   * replaced as a whole. The connector is told not to store properties itself, because its
   * follow-up commit upserts and would keep every old key.
   */
  StagedTable stageReplace(List<String> id, StructType schema, Map<String, String> statementProps) {
    Map<String, String> props = newTableProperties(id, statementProps);
    props.remove(TableCatalog.PROP_LOCATION);
    described.invalidate(id);
    DescribedTable e = described.describe(id);
    boolean serverProps = e.describe.getProperties() != null;
    if (!serverProps && !props.isEmpty()) {
      // Checked before any data is written, so a refused RTAS leaves the table untouched.
      e.requireUnmanaged(id, "replace table properties");
    }
    return LanceTables.stageReplace(e.handle, schema, TableProperties.datasetProps(props), false,
        catalogName, listener(id, false, () -> properties.replace(id, e, serverProps, props)));
  }

  private StagedTableListener listener(List<String> id, boolean created) {
    return listener(id, created, () -> { });
  }

  private StagedTableListener listener(List<String> id, boolean created, Runnable onCommit) {
    return new StagedTableListener() {
      @Override
      public void committed(TableHandle table, long version) {
        try {
          onCommit.run();
        } finally {
          described.invalidate(id);
        }
      }

      @Override
      public void aborted(TableHandle table) {
        described.invalidate(id);
        if (created) {
          // The connector removed the dataset; the declaration must go too, or a failed CTAS
          // would leave an empty, unreadable table behind.
          deregisterQuietly(id);
        }
      }
    };
  }

  private void deregisterQuietly(List<String> id) {
    try {
      client.deregisterTable(new DeregisterTableRequest().id(id));
    } catch (NotFoundException ignored) {
      // already gone
    } catch (RuntimeException e) {
      LOG.warn("Could not deregister table {} after a failed create: {}", Identifiers.display(id),
          e.getMessage());
    }
  }
}
