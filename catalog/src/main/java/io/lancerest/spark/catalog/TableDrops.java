package io.lancerest.spark.catalog;

import io.lancerest.client.Identifiers;
import io.lancerest.client.LanceRestClient;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.client.error.UnsupportedOperationByServerException;
import io.lancerest.client.model.DeregisterTableRequest;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DropTableRequest;
import io.lancerest.client.model.RenameTableRequest;
import io.lancerest.spark.connector.LanceTables;
import java.util.List;

/**
 * Drops, purges and renames tables: the operations after which a name no longer leads to the
 * table, with drops whose answer was lost reconciled by reading again.
 */
final class TableDrops {
  private final LanceRestClient client;
  private final DescribedTables described;

  TableDrops(LanceRestClient client, DescribedTables described) {
    this.client = client;
    this.described = described;
  }

  /** DROP TABLE: the namespace forgets the table, its data stays. False when it did not exist. */
  boolean drop(List<String> id) {
    try {
      client.deregisterTable(new DeregisterTableRequest().id(id));
      return true;
    } catch (NotFoundException e) {
      return false;
    } catch (RuntimeException e) {
      return reconcileGone("DeregisterTable", id, e,
          () -> client.deregisterTable(new DeregisterTableRequest().id(id)));
    } finally {
      described.invalidate(id);
    }
  }

  /** DROP TABLE … PURGE: table and data are deleted. */
  boolean purge(List<String> id) {
    try {
      client.dropTable(new DropTableRequest().id(id));
      return true;
    } catch (NotFoundException e) {
      return false;
    } catch (UnsupportedOperationByServerException e) {
      // The server can only forget tables: delete the data ourselves, then forget it.
      DescribedTable entry = described.describeFresh(id);
      client.deregisterTable(new DeregisterTableRequest().id(id));
      LanceTables.purge(entry.handle.location(), entry.handle.storageOptions());
      return true;
    } catch (RuntimeException e) {
      return reconcileGone("DropTable", id, e, () -> client.dropTable(new DropTableRequest()
          .id(id)));
    } finally {
      described.invalidate(id);
    }
  }

  /**
   * A drop whose outcome is unknown: done if the table is gone now; otherwise it was not applied,
   * and {@code again} (the same drop) is sent once more, whose error, if any, stands.
   */
  private boolean reconcileGone(String what, List<String> id, RuntimeException e,
      Runnable again) {
    if (!OutcomeUnknown.is(e)) {
      throw e;
    }
    described.invalidate(id);
    try {
      client.describeTable(new DescribeTableRequest().id(id));
    } catch (NotFoundException gone) {
      OutcomeUnknown.reconciled(what, id, "the table is gone, the drop was applied", e);
      return true;
    }
    OutcomeUnknown.reconciled(what, id, "the table is still there, dropping again", e);
    try {
      again.run();
    } catch (NotFoundException raced) {
      // dropped by someone else in between: gone, which is what was asked
    }
    return true;
  }

  void rename(List<String> from, List<String> to) {
    List<String> fromNs = from.subList(0, from.size() - 1);
    List<String> toNs = to.subList(0, to.size() - 1);
    try {
      client.renameTable(new RenameTableRequest().id(from).newTableName(to.get(to.size() - 1))
          .newNamespaceId(fromNs.equals(toNs) ? null : toNs));
    } catch (UnsupportedOperationByServerException e) {
      throw new UnsupportedCatalogOperationException("Cannot rename table "
          + Identifiers.display(from) + " to " + Identifiers.display(to) + ": the namespace "
          + "server at " + client.config().uri() + " does not support renaming tables. Copy it "
          + "instead (CREATE TABLE <new> AS SELECT * FROM <old>, then DROP TABLE <old>)", e);
    } finally {
      described.invalidate(from);
      described.invalidate(to);
    }
  }
}
