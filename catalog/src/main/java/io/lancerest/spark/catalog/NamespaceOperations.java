package io.lancerest.spark.catalog;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.error.AlreadyExistsException;
import io.lancerest.client.error.NamespaceNotEmptyException;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.client.model.CreateNamespaceRequest;
import io.lancerest.client.model.DropNamespaceRequest;
import io.lancerest.client.model.DropTableRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Creates and drops namespaces over plain identifiers, reconciling a call whose answer was lost;
 * not-found, not-empty and already-exists answers stay the REST client's exceptions.
 */
final class NamespaceOperations {
  private final LanceRestClient client;

  NamespaceOperations(LanceRestClient client) {
    this.client = client;
  }

  void create(List<String> id, Map<String, String> metadata) {
    try {
      client.createNamespace(new CreateNamespaceRequest().id(id).properties(metadata));
    } catch (AlreadyExistsException e) {
      throw e;
    } catch (RuntimeException e) {
      // Answer lost or 5xx: re-read. There now means created (by this call or a racing one);
      // not there means not applied, so creating once more cannot create it twice.
      if (!OutcomeUnknown.is(e)) {
        throw e;
      }
      if (client.namespaceExists(id)) {
        OutcomeUnknown.reconciled("CreateNamespace", id, "the namespace exists", e);
        return;
      }
      OutcomeUnknown.reconciled("CreateNamespace", id, "not created, creating again", e);
      client.createNamespace(new CreateNamespaceRequest().id(id).properties(metadata));
    }
  }

  /** DROP NAMESPACE; with {@code cascade}, its namespaces and tables (purged) first. */
  void drop(List<String> id, boolean cascade) {
    try {
      if (cascade) {
        dropContents(id);
      }
      client.dropNamespace(new DropNamespaceRequest().id(id).behavior("Restrict"));
    } catch (NamespaceNotEmptyException | NotFoundException e) {
      throw e;
    } catch (RuntimeException e) {
      // Answer lost or 5xx: re-read. Gone now means the drop was applied.
      if (!OutcomeUnknown.is(e) || client.namespaceExists(id)) {
        throw e;
      }
      OutcomeUnknown.reconciled("DropNamespace", id, "the namespace is gone", e);
    }
  }

  /**
   * CASCADE, done by the catalog: servers (the directory server among them) refuse
   * behavior=Cascade on a namespace that is not empty. Tables are purged, as Spark documents
   * CASCADE to delete the namespace's tables; data left behind would be unreachable.
   */
  private void dropContents(List<String> id) {
    for (String child : client.listAllNamespaces(id).toList()) {
      List<String> childId = new ArrayList<>(id);
      childId.add(child);
      dropContents(childId);
      client.dropNamespace(new DropNamespaceRequest().id(childId).behavior("Restrict"));
    }
    for (String table : client.listAllTables(id).toList()) {
      List<String> tableId = new ArrayList<>(id);
      tableId.add(table);
      try {
        client.dropTable(new DropTableRequest().id(tableId));
      } catch (NotFoundException ignored) {
        // dropped concurrently
      }
    }
  }
}
