package io.lancerest.spark.connector.search;

/** A search that cannot run as asked: the message names the table, the column and what to do. */
public final class SearchException extends IllegalArgumentException {
  public SearchException(String message) {
    super(message);
  }
}
