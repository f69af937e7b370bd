/**
 * Computed columns on Spark: the Java API on catalog tables, the backfill's fragment tasks as a
 * Spark job, and its {@code where} compiled by Spark's analyzer.
 */
package io.lancerest.spark.computed.spark;
