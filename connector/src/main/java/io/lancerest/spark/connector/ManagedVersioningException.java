package io.lancerest.spark.connector;

/**
 * A change was attempted directly on the dataset of a table whose versions the namespace manages.
 * Committing behind the namespace's back would fork the table's history, so such changes must go
 * through the namespace's own operations instead.
 */
public class ManagedVersioningException extends UnsupportedOperationException {

  private final String table;

  public ManagedVersioningException(String table, String operation) {
    super(
        "Cannot "
            + operation
            + " on table "
            + table
            + " directly on its Lance dataset: the namespace manages this table's versions"
            + " (managed_versioning=true). Use the namespace server's operation for this change.");
    this.table = table;
  }

  public String table() {
    return table;
  }
}
