package io.lancerest.spark.mv.sql;

import io.lancerest.spark.mv.definition.MaterializedViewKind;
import java.util.List;
import java.util.Map;

/**
 * A parsed statement of our SQL extension: the materialized-view statements, CREATE INDEX for
 * the index methods lance-spark 0.4.0 lacks, and SHOW INDEXES. Names are multipart identifiers
 * exactly as written (catalog resolution happens when the command runs). Option values are
 * strings as written (string literals unquoted, numbers and booleans as their text).
 */
public sealed interface MvStatement {

  /**
   * {@code CREATE MATERIALIZED VIEW}.
   *
   * @param functionKind {@code UDTF} or {@code CHUNKER} for {@code USING ...}, else {@code null}
   * @param functionClass the class named in {@code USING ... '<class>'}, or {@code null}
   * @param query the SELECT's text as written (parsed and validated by Spark's parser)
   * @param withData {@code WITH DATA} (the default) populates the view at creation
   */
  record Create(List<String> name, boolean ifNotExists, MaterializedViewKind functionKind,
      String functionClass, String partitionBy, String partitionByIndexed,
      Map<String, String> options, Map<String, String> tableProperties, String query,
      boolean withData) implements MvStatement {
    /** The view kind the statement declares. */
    public MaterializedViewKind kind() {
      return functionKind == null ? MaterializedViewKind.QUERY : functionKind;
    }
  }

  /**
   * {@code REFRESH MATERIALIZED VIEW name [ASYNC] [WITH (k = v, ...)]}; {@code async} returns at
   * once with the job RUNNING.
   */
  record Refresh(List<String> name, Map<String, String> options, boolean async)
      implements MvStatement {
    public Refresh(List<String> name, Map<String, String> options) {
      this(name, options, false);
    }
  }

  /**
   * {@code SHOW JOBS [IN catalog] [FOR view] [LIMIT n]}; {@code catalog} and {@code view} null
   * when not given, {@code limit} null for every job.
   */
  record ShowJobs(String catalog, List<String> view, Integer limit) implements MvStatement {}

  /**
   * {@code DESCRIBE|DESC JOB 'id' [IN catalog | FOR view]}; {@code view} names the job's view,
   * which a view service needs to find it.
   */
  record DescribeJob(String jobId, String catalog, List<String> view) implements MvStatement {}

  /** {@code CANCEL JOB 'id' [IN catalog | FOR view]}. */
  record CancelJob(String jobId, String catalog, List<String> view) implements MvStatement {}

  /**
   * {@code EXPLAIN REFRESH MATERIALIZED VIEW name [WITH (k = v, ...)]}: what the refresh would
   * do, with nothing written or committed.
   */
  record ExplainRefresh(List<String> name, Map<String, String> options) implements MvStatement {}

  /** {@code DROP MATERIALIZED VIEW [IF EXISTS] name}. */
  record Drop(List<String> name, boolean ifExists) implements MvStatement {}

  /** {@code OPTIMIZE MATERIALIZED VIEW name}: compaction and old-version removal, now. */
  record Optimize(List<String> name) implements MvStatement {}

  /** {@code SHOW MATERIALIZED VIEWS [IN|FROM namespace]}; {@code namespace} null = current. */
  record Show(List<String> namespace) implements MvStatement {}

  /**
   * {@code ALTER TABLE table CREATE INDEX indexName USING method (column) [WITH (k = v, ...)]}
   * for a vector method or bitmap ({@link VectorIndexes}); {@code method} lower case, option
   * keys as written.
   */
  record CreateVectorIndex(List<String> table, String indexName, String method, String column,
      Map<String, String> options) implements MvStatement {}

  /** {@code SHOW INDEXES|INDEX FROM|IN table} ({@link TableIndexes}). */
  record ShowIndexes(List<String> table) implements MvStatement {}

  /** {@code DESCRIBE|DESC MATERIALIZED VIEW name}. */
  record Describe(List<String> name) implements MvStatement {}

  /** ALTER TABLE t ADD COLUMN c [type] COMPUTED BY 'class' (in, ...) [OPTIONS] [WITH]. */
  record AddComputedColumn(List<String> table, String column, String type, String className,
      List<String> inputs, Map<String, String> options, Map<String, String> with)
      implements MvStatement {}

  /** ALTER TABLE t BACKFILL COLUMN c [WHERE condition] [WITH (...)]. */
  record BackfillColumn(List<String> table, String column, String where,
      Map<String, String> options) implements MvStatement {}
}
