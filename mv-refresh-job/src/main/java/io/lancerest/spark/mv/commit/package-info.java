/**
 * The atomic commit of a view change on lance-core 4.0.0 ({@link
 * io.lancerest.spark.mv.commit.ViewCommit}), and how fragments written by Spark tasks travel to
 * the driver that commits them ({@link io.lancerest.spark.mv.commit.FragmentShipping}).
 */
package io.lancerest.spark.mv.commit;
