/**
 * Materialized views over Lance REST namespaces: the definition model (kinds, source query,
 * function envelope, error handling, Geneva metadata layout), the {@link
 * io.lancerest.spark.mv.MaterializedViews} API shared by SQL, Java and the {@link
 * io.lancerest.spark.mv.RefreshJob} CLI. Formats: {@code docs/materialized-views.md}.
 */
package io.lancerest.spark.mv;
