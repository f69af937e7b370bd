/**
 * The materialized-view engine behind {@code MaterializedViews}: catalog binding, server-managed
 * and client-managed modes, validation at CREATE, the one refresh dispatch by kind, and the job
 * log of the catalog's refreshes (its table, the catalog's job service, SHOW/DESCRIBE/CANCEL).
 */
package io.lancerest.spark.mv.engine;
