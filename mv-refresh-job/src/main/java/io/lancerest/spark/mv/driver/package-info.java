/**
 * Runs a definition's filters and projections over a few source fragments on the driver, giving
 * the rows the Spark path's tasks would, without the fixed cost of a Spark job.
 */
package io.lancerest.spark.mv.driver;
