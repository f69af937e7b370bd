package io.lancerest.spark.mv;

import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** A catalog that only has a name: enough for Spark to resolve {@code lance.ns.v}. */
public final class NamedTestCatalog implements CatalogPlugin {
  private String name;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    this.name = name;
  }

  @Override
  public String name() {
    return name;
  }
}
