package io.lancerest.spark.catalog;

import io.lancerest.client.LanceRestClient;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.types.StructType;

/**
 * The table half of the catalog over plain identifiers ({@code List<String>}, the catalog's
 * {@code parent} already prepended), one phase a collaborator: describe, load, create, alter,
 * drop. The REST server is asked first; where it lacks an operation and the table's versions are
 * not managed by the namespace, the change is made on the Lance dataset through the connector.
 *
 * <p>Not-found and already-exists answers are left as the REST client's typed exceptions; the
 * Spark facade turns them into Spark's own.
 */
final class TableOperations {
  private final DescribedTables described;
  private final TableLoader loader;
  private final TableCreation creation;
  private final TableAlteration alteration;
  private final TableDrops drops;

  TableOperations(LanceRestClient client, CatalogOptions options, String catalogName,
      Supplier<CredentialRelay> relay) {
    this.described = new DescribedTables(client, options, relay);
    this.loader = new TableLoader(described, catalogName);
    TablePropertyWrites properties = new TablePropertyWrites(client);
    this.creation =
        new TableCreation(client, options, catalogName, described, loader, properties);
    this.alteration = new TableAlteration(client, described, properties);
    this.drops = new TableDrops(client, described);
  }

  TableCache<DescribedTable> cache() {
    return described.cache();
  }

  /** The storage options of a table after a DescribeTable that vended {@code vended}. */
  Map<String, String> storage(Map<String, String> vended) {
    return described.storage(vended);
  }

  /** The namespace client executors renew table {@code id}'s expiring credentials with. */
  Map<String, String> executorNamespace(List<String> id, Map<String, String> vended) {
    return described.executorNamespace(id, vended);
  }

  boolean exists(List<String> id) {
    return described.exists(id);
  }

  Table load(List<String> id, String displayName) {
    return loader.load(id, displayName);
  }

  Table loadAtVersion(List<String> id, String versionOrTag, String displayName) {
    return loader.loadAtVersion(id, versionOrTag, displayName);
  }

  Table loadAtTimestamp(List<String> id, long micros, String displayName) {
    return loader.loadAtTimestamp(id, micros, displayName);
  }

  Table create(List<String> id, StructType schema, Map<String, String> statementProps,
      String displayName) {
    return creation.create(id, schema, statementProps, displayName);
  }

  StagedTable stageCreate(List<String> id, StructType schema, Map<String, String> statementProps) {
    return creation.stageCreate(id, schema, statementProps);
  }

  StagedTable stageReplace(List<String> id, StructType schema, Map<String, String> statementProps) {
    return creation.stageReplace(id, schema, statementProps);
  }

  void alter(List<String> id, TableChange... changes) {
    alteration.alter(id, changes);
  }

  boolean drop(List<String> id) {
    return drops.drop(id);
  }

  boolean purge(List<String> id) {
    return drops.purge(id);
  }

  void rename(List<String> from, List<String> to) {
    drops.rename(from, to);
  }

  /** Every table below {@code namespace} leaves the cache (DROP NAMESPACE). */
  void invalidateUnder(List<String> namespace) {
    described.cache().invalidateUnder(namespace);
  }

  void invalidate(List<String> id) {
    described.invalidate(id);
  }
}
