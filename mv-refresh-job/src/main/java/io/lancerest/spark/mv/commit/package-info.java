/**
 * The atomic commit of a view change ({@link io.lancerest.spark.mv.commit.ViewCommit}: an
 * Overwrite, the one lance-core 4.0.0 operation that commits data, schema metadata and config
 * together, with the view's indexes carried over it), and how fragments written by Spark tasks
 * travel to the driver that commits them ({@link io.lancerest.spark.mv.commit.FragmentShipping}).
 */
package io.lancerest.spark.mv.commit;
