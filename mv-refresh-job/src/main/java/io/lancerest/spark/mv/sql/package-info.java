/**
 * The SQL statements for materialized views: a hand-written parser for the statement prefix that
 * hands identifiers and the SELECT to Spark's parser, and the Spark command that runs a statement
 * against the {@link io.lancerest.spark.mv.MaterializedViews} API. Also CREATE INDEX with a
 * vector method, which lance-spark 0.4.0's SQL lacks
 * ({@link io.lancerest.spark.mv.sql.VectorIndexes}).
 */
package io.lancerest.spark.mv.sql;
