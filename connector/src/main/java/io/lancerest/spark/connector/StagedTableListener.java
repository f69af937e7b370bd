package io.lancerest.spark.connector;

/**
 * Lets the catalog finish a CTAS / RTAS on its side once the data outcome is known: register the
 * table with the namespace after the data commit, or forget a declared table after an abort.
 * Both methods run on the driver, after the dataset change has completed.
 */
public interface StagedTableListener {

  /** No-op listener for callers with nothing to do on their side. */
  StagedTableListener NONE = new StagedTableListener() {};

  /**
   * The dataset now holds the staged data at {@code version}. Throwing here fails the Spark
   * statement, but the data commit itself stays in place.
   */
  default void committed(TableHandle table, long version) {}

  /** The staged change was abandoned; for a staged create, the dataset directory is gone. */
  default void aborted(TableHandle table) {}
}
