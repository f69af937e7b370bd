/**
 * The engine's public entry points: the {@link io.lancerest.spark.mv.MaterializedViews} facade
 * shared by SQL and Java, the {@code spark-submit} main {@link io.lancerest.spark.mv.RefreshJob},
 * and what a caller passes in (requests, options, a listener). Answers live in {@code result},
 * definitions in {@code definition}, errors in {@code error}, the interfaces users implement in
 * {@code function}. Formats: {@code docs/materialized-views.md}.
 */
package io.lancerest.spark.mv;
