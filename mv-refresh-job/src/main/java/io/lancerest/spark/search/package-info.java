/**
 * The search table functions {@code vector_search} and {@code search} of the SQL extensions:
 * their arguments read into search requests, the table resolved through the session's catalog.
 */
package io.lancerest.spark.search;
