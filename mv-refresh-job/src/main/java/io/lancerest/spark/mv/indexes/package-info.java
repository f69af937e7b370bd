/**
 * What indexes a Lance table has and how much of it each covers, read with lance-core alone (no
 * Spark): {@link io.lancerest.spark.mv.indexes.DatasetIndexes} reads them into {@link
 * io.lancerest.spark.mv.indexes.IndexSummary} rows.
 */
package io.lancerest.spark.mv.indexes;
