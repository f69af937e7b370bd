package io.lancerest.spark.catalog;

/**
 * A statement the catalog cannot carry out on this server, explained in plain words: what was
 * asked, why it cannot be done, and what to do instead. Never carries HTTP details beyond the
 * server's short answer.
 */
public class UnsupportedCatalogOperationException extends UnsupportedOperationException {
  public UnsupportedCatalogOperationException(String message) {
    super(message);
  }

  public UnsupportedCatalogOperationException(String message, Throwable cause) {
    super(message, cause);
  }
}
