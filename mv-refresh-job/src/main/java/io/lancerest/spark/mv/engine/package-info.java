/**
 * The materialized-view engine behind {@code MaterializedViews}: catalog binding, server-managed
 * and client-managed modes, validation at CREATE, and the one refresh dispatch by kind.
 */
package io.lancerest.spark.mv.engine;
