package io.lancerest.client.spec;

/**
 * Every operation of the Lance REST Namespace spec, with its route and its retry class.
 *
 * <p>Almost every route is a POST, including pure reads, so whether a request may be retried is a
 * property of the operation and never of the HTTP method.
 */
public enum Operation {
  // namespace
  CREATE_NAMESPACE("CreateNamespace", "POST", "/v1/namespace/{id}/create", false),
  LIST_NAMESPACES("ListNamespaces", "GET", "/v1/namespace/{id}/list", true),
  DESCRIBE_NAMESPACE("DescribeNamespace", "POST", "/v1/namespace/{id}/describe", true),
  DROP_NAMESPACE("DropNamespace", "POST", "/v1/namespace/{id}/drop", false),
  NAMESPACE_EXISTS("NamespaceExists", "POST", "/v1/namespace/{id}/exists", true),
  LIST_TABLES("ListTables", "GET", "/v1/namespace/{id}/table/list", true),
  // table metadata
  LIST_ALL_TABLES("ListAllTables", "GET", "/v1/table", true),
  REGISTER_TABLE("RegisterTable", "POST", "/v1/table/{id}/register", false),
  DESCRIBE_TABLE("DescribeTable", "POST", "/v1/table/{id}/describe", true),
  TABLE_EXISTS("TableExists", "POST", "/v1/table/{id}/exists", true),
  DROP_TABLE("DropTable", "POST", "/v1/table/{id}/drop", false),
  DEREGISTER_TABLE("DeregisterTable", "POST", "/v1/table/{id}/deregister", false),
  DECLARE_TABLE("DeclareTable", "POST", "/v1/table/{id}/declare", false),
  RESTORE_TABLE("RestoreTable", "POST", "/v1/table/{id}/restore", false),
  RENAME_TABLE("RenameTable", "POST", "/v1/table/{id}/rename", false),
  UPDATE_TABLE_SCHEMA_METADATA(
      "UpdateTableSchemaMetadata", "POST", "/v1/table/{id}/schema_metadata/update", false),
  UPDATE_FIELD_METADATA("UpdateFieldMetadata", "POST", "/v1/table/{id}/update_field_metadata", false),
  ALTER_TABLE_ALTER_COLUMNS("AlterTableAlterColumns", "POST", "/v1/table/{id}/alter_columns", false),
  ALTER_TABLE_DROP_COLUMNS("AlterTableDropColumns", "POST", "/v1/table/{id}/drop_columns", false),
  ALTER_TABLE_ADD_COLUMNS("AlterTableAddColumns", "POST", "/v1/table/{id}/add_columns", false),
  ALTER_TABLE_BACKFILL_COLUMNS(
      "AlterTableBackfillColumns", "POST", "/v1/table/{id}/backfill_column", false),
  GET_TABLE_STATS("GetTableStats", "POST", "/v1/table/{id}/stats", true),
  // versions
  LIST_TABLE_VERSIONS("ListTableVersions", "POST", "/v1/table/{id}/version/list", true),
  CREATE_TABLE_VERSION("CreateTableVersion", "POST", "/v1/table/{id}/version/create", false),
  DESCRIBE_TABLE_VERSION("DescribeTableVersion", "POST", "/v1/table/{id}/version/describe", true),
  BATCH_DELETE_TABLE_VERSIONS(
      "BatchDeleteTableVersions", "POST", "/v1/table/{id}/version/delete", false),
  BATCH_CREATE_TABLE_VERSIONS(
      "BatchCreateTableVersions", "POST", "/v1/table/version/batch-create", false),
  BATCH_COMMIT_TABLES("BatchCommitTables", "POST", "/v1/table/batch-commit", false),
  // data
  CREATE_TABLE("CreateTable", "POST", "/v1/table/{id}/create", false),
  INSERT_INTO_TABLE("InsertIntoTable", "POST", "/v1/table/{id}/insert", false),
  MERGE_INSERT_INTO_TABLE("MergeInsertIntoTable", "POST", "/v1/table/{id}/merge_insert", false),
  UPDATE_TABLE("UpdateTable", "POST", "/v1/table/{id}/update", false),
  DELETE_FROM_TABLE("DeleteFromTable", "POST", "/v1/table/{id}/delete", false),
  QUERY_TABLE("QueryTable", "POST", "/v1/table/{id}/query", true),
  COUNT_TABLE_ROWS("CountTableRows", "POST", "/v1/table/{id}/count_rows", true),
  EXPLAIN_TABLE_QUERY_PLAN("ExplainTableQueryPlan", "POST", "/v1/table/{id}/explain_plan", true),
  ANALYZE_TABLE_QUERY_PLAN("AnalyzeTableQueryPlan", "POST", "/v1/table/{id}/analyze_plan", true),
  // indexes
  CREATE_TABLE_INDEX("CreateTableIndex", "POST", "/v1/table/{id}/create_index", false),
  CREATE_TABLE_SCALAR_INDEX(
      "CreateTableScalarIndex", "POST", "/v1/table/{id}/create_scalar_index", false),
  LIST_TABLE_INDICES("ListTableIndices", "POST", "/v1/table/{id}/index/list", true),
  DESCRIBE_TABLE_INDEX_STATS(
      "DescribeTableIndexStats", "POST", "/v1/table/{id}/index/{index_name}/stats", true),
  DROP_TABLE_INDEX("DropTableIndex", "POST", "/v1/table/{id}/index/{index_name}/drop", false),
  // tags
  LIST_TABLE_TAGS("ListTableTags", "POST", "/v1/table/{id}/tags/list", true),
  GET_TABLE_TAG_VERSION("GetTableTagVersion", "POST", "/v1/table/{id}/tags/version", true),
  CREATE_TABLE_TAG("CreateTableTag", "POST", "/v1/table/{id}/tags/create", false),
  DELETE_TABLE_TAG("DeleteTableTag", "POST", "/v1/table/{id}/tags/delete", false),
  UPDATE_TABLE_TAG("UpdateTableTag", "POST", "/v1/table/{id}/tags/update", false),
  // branches
  LIST_TABLE_BRANCHES("ListTableBranches", "POST", "/v1/table/{id}/branches/list", true),
  CREATE_TABLE_BRANCH("CreateTableBranch", "POST", "/v1/table/{id}/branches/create", false),
  DELETE_TABLE_BRANCH("DeleteTableBranch", "POST", "/v1/table/{id}/branches/delete", false),
  // transactions
  DESCRIBE_TRANSACTION("DescribeTransaction", "POST", "/v1/transaction/{id}/describe", true),
  ALTER_TRANSACTION("AlterTransaction", "POST", "/v1/transaction/{id}/alter", false),
  // materialized views
  CREATE_MATERIALIZED_VIEW(
      "CreateMaterializedView", "POST", "/v1/materialized_view/{id}/create", false),
  REFRESH_MATERIALIZED_VIEW(
      "RefreshMaterializedView", "POST", "/v1/materialized_view/{id}/refresh", false),
  // this project's extensions (the view service's jobs; the spec has no route for them)
  DESCRIBE_MATERIALIZED_VIEW_JOB(
      "DescribeMaterializedViewJob", "POST", "/v1/materialized_view/{id}/job/describe", true),
  LIST_MATERIALIZED_VIEW_JOBS(
      "ListMaterializedViewJobs", "POST", "/v1/materialized_view/{id}/job/list", true),
  // cancelling an ended job answers its record, so a retry after a lost answer is harmless
  CANCEL_MATERIALIZED_VIEW_JOB(
      "CancelMaterializedViewJob", "POST", "/v1/materialized_view/{id}/job/cancel", true);

  private final String specName;
  private final String method;
  private final String pathTemplate;
  private final boolean read;

  Operation(String specName, String method, String pathTemplate, boolean read) {
    this.specName = specName;
    this.method = method;
    this.pathTemplate = pathTemplate;
    this.read = read;
  }

  /** The operationId used by the spec, e.g. {@code DescribeTable}. */
  public String specName() {
    return specName;
  }

  public String method() {
    return method;
  }

  public String pathTemplate() {
    return pathTemplate;
  }

  /**
   * True when the operation only reads state, so that repeating it cannot change the outcome.
   * Reads may be retried on 5xx, 408 and connection resets; mutations may not.
   */
  public boolean isRead() {
    return read;
  }

  @Override
  public String toString() {
    return specName;
  }
}
