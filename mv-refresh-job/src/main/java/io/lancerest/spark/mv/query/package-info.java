/**
 * Query views: the SELECT analysis that turns {@code CREATE MATERIALIZED VIEW … AS SELECT} into a
 * source query, the view layout ({@code __source_row_id}, {@code __is_set}, projection) and the
 * incremental refresh committed as one atomic {@code ViewCommit}.
 */
package io.lancerest.spark.mv.query;
