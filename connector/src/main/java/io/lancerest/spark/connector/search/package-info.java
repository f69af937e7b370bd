/**
 * Vector and full-text search of a Lance table with lance-core, without Spark: a request is
 * checked against the table's schema and indexes ({@link
 * io.lancerest.spark.connector.search.SearchPlan}), which says what it will use, and run on a
 * dataset at the version it was planned for ({@link io.lancerest.spark.connector.search.Searches}).
 */
package io.lancerest.spark.connector.search;
