/**
 * The materialized-view service: a Lance REST namespace in front of another one that serves the
 * spec's CreateMaterializedView and RefreshMaterializedView, runs the refreshes as Spark jobs in
 * its own driver, and forwards every other route unchanged.
 */
package io.lancerest.spark.mv.server;
