package io.lancerest.spark.catalog;

/**
 * The contract against a server that renames tables, keeps table properties and pages its
 * lists: the directory server behind a scripting proxy that adds what it lacks.
 */
class ScriptedServerContractTest extends CatalogContractTest {
  @Override
  String catalog() {
    return "lance_s";
  }

  @Override
  boolean supportsRename() {
    return true;
  }

  @Override
  boolean serverKeepsProperties() {
    return true;
  }

  @Override
  boolean pagesLists() {
    return true;
  }

  @Override
  boolean runsServerIndependentCases() {
    return false;
  }
}
