/**
 * Computed columns: a column of a catalog table whose values a {@link
 * io.lancerest.spark.mv.function.ColumnFunction} computes from other columns of the same row, its
 * definition stored with the table ({@link io.lancerest.spark.computed.ComputedColumn}, in the
 * column's field metadata) and its values filled by backfill jobs.
 */
package io.lancerest.spark.computed;
