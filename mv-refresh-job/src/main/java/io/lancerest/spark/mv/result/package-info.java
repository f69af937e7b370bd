/**
 * What the engine answers: a refresh's {@link io.lancerest.spark.mv.result.RefreshResult} and
 * job record, EXPLAIN REFRESH's plan, a view's description and a maintenance run's result.
 */
package io.lancerest.spark.mv.result;
