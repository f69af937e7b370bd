/**
 * The batch UDTF kind of materialized view (N:M): a user function ({@link
 * io.lancerest.spark.mv.function.BatchUdtf}) is called once per partition of the source with a
 * streaming iterator over that partition's rows, partitions run in parallel Spark tasks, and the
 * whole view is replaced in one atomic overwrite ({@link io.lancerest.spark.mv.udtf.UdtfRefresh}).
 */
package io.lancerest.spark.mv.udtf;
