package io.lancerest.spark.catalog;

/** The contract against the directory server of lance-core, as it is. */
class DirServerContractTest extends CatalogContractTest {
  @Override
  String catalog() {
    return "lance";
  }

  @Override
  boolean supportsRename() {
    return false;
  }

  @Override
  boolean serverKeepsProperties() {
    return false;
  }

  @Override
  boolean pagesLists() {
    return false;
  }

  @Override
  boolean runsServerIndependentCases() {
    return true;
  }
}
