package io.lancerest.spark.connector;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.NoSuchFunctionException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.FunctionCatalog;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.StagingTableCatalog;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Test-only catalog standing in for the REST catalog: identifiers map to dataset directories under
 * {@code root}, and everything else is delegated to the connector exactly as the real catalog
 * would, with properties kept in the dataset (no server to hold them).
 */
public class DirectoryTestCatalog implements StagingTableCatalog, FunctionCatalog {

  private String name;
  private Path root;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    this.name = name;
    this.root = Paths.get(options.get("root"));
  }

  @Override
  public String name() {
    return name;
  }

  TableHandle handle(Identifier ident) {
    List<String> id = new ArrayList<>(List.of(ident.namespace()));
    id.add(ident.name());
    Path dir = root;
    for (String part : ident.namespace()) {
      dir = dir.resolve(part);
    }
    return TableHandle.builder(id, dir.resolve(ident.name() + ".lance").toString()).build();
  }

  @Override
  public Identifier[] listTables(String[] namespace) {
    return new Identifier[0];
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    TableHandle h = handle(ident);
    if (!LanceTables.datasetExists(h.location(), h.storageOptions())) {
      throw new NoSuchTableException(ident);
    }
    return LanceTables.loadTable(h, name);
  }

  @Override
  public Table loadTable(Identifier ident, String version) {
    return LanceTables.loadTableAtVersionOrTag(handle(ident), version, name);
  }

  @Override
  public Table loadTable(Identifier ident, long timestamp) {
    return LanceTables.loadTableAsOfTimestamp(handle(ident), timestamp, name);
  }

  @Override
  public Table createTable(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException {
    TableHandle h = handle(ident);
    if (LanceTables.datasetExists(h.location(), h.storageOptions())) {
      throw new TableAlreadyExistsException(ident);
    }
    return LanceTables.createTable(h, schema, properties, true, name);
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) {
    TableHandle h = handle(ident);
    LanceTableAlterations.alterTable(h, changes);
    return LanceTables.loadTable(h, name);
  }

  @Override
  public boolean dropTable(Identifier ident) {
    TableHandle h = handle(ident);
    boolean existed = LanceTables.datasetExists(h.location(), h.storageOptions());
    LanceTables.purge(h.location(), h.storageOptions());
    return existed;
  }

  @Override
  public void renameTable(Identifier oldIdent, Identifier newIdent) {
    throw new UnsupportedOperationException("rename is not part of this test catalog");
  }

  @Override
  public StagedTable stageCreate(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException {
    TableHandle h = handle(ident);
    if (LanceTables.datasetExists(h.location(), h.storageOptions())) {
      throw new TableAlreadyExistsException(ident);
    }
    return LanceTables.stageCreate(h, schema, properties, true, name, StagedTableListener.NONE);
  }

  @Override
  public StagedTable stageReplace(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws NoSuchTableException {
    TableHandle h = handle(ident);
    if (!LanceTables.datasetExists(h.location(), h.storageOptions())) {
      throw new NoSuchTableException(ident);
    }
    return LanceTables.stageReplace(h, schema, properties, true, name, StagedTableListener.NONE);
  }

  @Override
  public StagedTable stageCreateOrReplace(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties) {
    return LanceTables.stageCreateOrReplace(
        handle(ident), schema, properties, true, name, StagedTableListener.NONE);
  }

  @Override
  public Identifier[] listFunctions(String[] namespace) {
    return LanceFunctions.listFunctions(namespace);
  }

  @Override
  public UnboundFunction loadFunction(Identifier ident) throws NoSuchFunctionException {
    return LanceFunctions.loadFunction(ident);
  }
}
