package io.lancerest.client;

// The facade names nearly every request and response record of the model.
import io.lancerest.client.arrow.ArrowBatches;
import io.lancerest.client.arrow.ArrowIpc;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.client.model.*;
import io.lancerest.client.spec.Operation;
import java.io.Closeable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A typed client for the Lance REST Namespace spec: one method per operation. It is the only
 * component of this project that speaks HTTP to the namespace server.
 *
 * <p>Thread-safe; share one instance per catalog. Close it to release the connection pool and
 * the OAuth2 refresh thread.
 */
public final class LanceRestClient implements Closeable {
  private final HttpTransport transport;
  private final RestCalls calls;
  private final TableMetadataCalls tableMetadata;
  private final TableDataCalls tableData;

  public LanceRestClient(HttpTransport transport) {
    this.transport = transport;
    this.calls = new RestCalls(transport, LanceJson.mapper());
    this.tableMetadata = new TableMetadataCalls(calls);
    this.tableData = new TableDataCalls(calls);
  }

  /** A client from flat options ({@code uri}, {@code delimiter}, {@code header.*}, …). */
  public static LanceRestClient create(Map<String, String> options) {
    return new LanceRestClient(new HttpTransport(RestClientConfig.fromProperties(options)));
  }

  public RestClientConfig config() {
    return transport.config();
  }

  public String delimiter() {
    return transport.config().delimiter();
  }

  // ---------------------------------------------------------------- namespace

  public CreateNamespaceResponse createNamespace(CreateNamespaceRequest request) {
    return calls.json(Operation.CREATE_NAMESPACE, request, CreateNamespaceResponse.class);
  }

  /** One page of child namespaces. */
  public ListNamespacesResponse listNamespaces(ListNamespacesRequest request) {
    return calls.noBody(Operation.LIST_NAMESPACES, request,
        RestCalls.pageQuery(request.getPageToken(), request.getLimit()),
            ListNamespacesResponse.class);
  }

  /** Every child namespace of {@code parent}, following every page. */
  public Stream<String> listAllNamespaces(List<String> parent) {
    return Pages.stream(Operation.LIST_NAMESPACES, parent,
        token -> listNamespaces(new ListNamespacesRequest().id(parent).pageToken(token)),
        ListNamespacesResponse::getNamespaces, ListNamespacesResponse::getPageToken);
  }

  public DescribeNamespaceResponse describeNamespace(DescribeNamespaceRequest request) {
    return calls.json(Operation.DESCRIBE_NAMESPACE, request, DescribeNamespaceResponse.class);
  }

  public DropNamespaceResponse dropNamespace(DropNamespaceRequest request) {
    return calls.json(Operation.DROP_NAMESPACE, request, DropNamespaceResponse.class);
  }

  /** NamespaceExists: returns normally when it exists, throws NamespaceNotFoundException if not. */
  public void namespaceExists(NamespaceExistsRequest request) {
    calls.call(Operation.NAMESPACE_EXISTS, request, Map.of(), calls.jsonBody(request));
  }

  /** True when the namespace exists; false only for a genuine not-found, other errors propagate. */
  public boolean namespaceExists(List<String> id) {
    try {
      namespaceExists(new NamespaceExistsRequest().id(id));
      return true;
    } catch (NotFoundException e) {
      return false;
    }
  }

  /** One page of the tables in a namespace. */
  public ListTablesResponse listTables(ListTablesRequest request) {
    Map<String, Object> q = RestCalls.pageQuery(request.getPageToken(), request.getLimit());
    q.put("include_declared", request.getIncludeDeclared());
    return calls.noBody(Operation.LIST_TABLES, request, q, ListTablesResponse.class);
  }

  /** Every table of a namespace, following every page. */
  public Stream<String> listAllTables(List<String> namespace) {
    return Pages.stream(Operation.LIST_TABLES, namespace,
        token -> listTables(new ListTablesRequest().id(namespace).pageToken(token)),
        ListTablesResponse::getTables, ListTablesResponse::getPageToken);
  }

  /**
   * ListAllTables ({@code GET /v1/table}): one page of the tables of the whole catalog, named by
   * their full identifiers joined with the delimiter. Not to be confused with
   * {@link #listAllTables(List)}, which follows the pages of one namespace.
   */
  public ListTablesResponse listAllTables(ListAllTablesRequest request) {
    Map<String, Object> q = RestCalls.pageQuery(request.pageToken(), request.limit());
    q.put("include_declared", request.includeDeclared());
    return calls.noBody(Operation.LIST_ALL_TABLES, request, q, ListTablesResponse.class);
  }

  /** Every table of the catalog (ListAllTables), following every page. */
  public Stream<String> streamAllTables() {
    return Pages.stream(Operation.LIST_ALL_TABLES, null,
        token -> listAllTables(new ListAllTablesRequest(token, null, null)),
        ListTablesResponse::getTables, ListTablesResponse::getPageToken);
  }

  // ---------------------------------------------------------------- table metadata

  public DescribeTableResponse describeTable(DescribeTableRequest request) {
    return tableMetadata.describeTable(request);
  }

  /** TableExists: returns normally when it exists, throws a NotFoundException if not. */
  public void tableExists(TableExistsRequest request) {
    tableMetadata.tableExists(request);
  }

  /**
   * True when the table exists; false only for a genuine not-found (of the table or of its
   * namespace). Every other failure propagates, so an outage never reads as "no such table".
   */
  public boolean tableExists(List<String> id) {
    return tableMetadata.tableExists(id);
  }

  public RegisterTableResponse registerTable(RegisterTableRequest request) {
    return calls.json(Operation.REGISTER_TABLE, request, RegisterTableResponse.class);
  }

  public DeclareTableResponse declareTable(DeclareTableRequest request) {
    return calls.json(Operation.DECLARE_TABLE, request, DeclareTableResponse.class);
  }

  /** DropTable: removes the table and its data. The route takes no body. */
  public DropTableResponse dropTable(DropTableRequest request) {
    return calls.noBody(Operation.DROP_TABLE, request, Map.of(), DropTableResponse.class);
  }

  /** DeregisterTable: forgets the table but leaves its data in place. */
  public DeregisterTableResponse deregisterTable(DeregisterTableRequest request) {
    return calls.json(Operation.DEREGISTER_TABLE, request, DeregisterTableResponse.class);
  }

  public RenameTableResponse renameTable(RenameTableRequest request) {
    return calls.json(Operation.RENAME_TABLE, request, RenameTableResponse.class);
  }

  public RestoreTableResponse restoreTable(RestoreTableRequest request) {
    return calls.json(Operation.RESTORE_TABLE, request, RestoreTableResponse.class);
  }

  /**
   * UpdateTableSchemaMetadata. On the wire both the request and the answer are a bare string
   * map (the branch goes in the query); the response record carries the map as {@code metadata}.
   */
  public UpdateTableSchemaMetadataResponse updateTableSchemaMetadata(
      UpdateTableSchemaMetadataRequest request) {
    return tableMetadata.updateTableSchemaMetadata(request);
  }

  public UpdateFieldMetadataResponse updateFieldMetadata(UpdateFieldMetadataRequest request) {
    return calls.json(Operation.UPDATE_FIELD_METADATA, request, UpdateFieldMetadataResponse.class);
  }

  public AlterTableAddColumnsResponse alterTableAddColumns(AlterTableAddColumnsRequest request) {
    return calls.json(Operation.ALTER_TABLE_ADD_COLUMNS, request,
        AlterTableAddColumnsResponse.class);
  }

  public AlterTableAlterColumnsResponse alterTableAlterColumns(
      AlterTableAlterColumnsRequest request) {
    return calls.json(Operation.ALTER_TABLE_ALTER_COLUMNS, request,
        AlterTableAlterColumnsResponse.class);
  }

  public AlterTableDropColumnsResponse alterTableDropColumns(AlterTableDropColumnsRequest request) {
    return calls.json(Operation.ALTER_TABLE_DROP_COLUMNS, request,
        AlterTableDropColumnsResponse.class);
  }

  /** AlterTableBackfillColumns: accepted asynchronously (HTTP 202) with a job id. */
  public AlterTableBackfillColumnsResponse alterTableBackfillColumns(
      AlterTableBackfillColumnsRequest request) {
    return calls.json(Operation.ALTER_TABLE_BACKFILL_COLUMNS, request,
        AlterTableBackfillColumnsResponse.class);
  }

  public GetTableStatsResponse getTableStats(GetTableStatsRequest request) {
    return calls.json(Operation.GET_TABLE_STATS, request, GetTableStatsResponse.class);
  }

  // ---------------------------------------------------------------- versions

  /** One page of versions. The route takes no body: paging and branch go in the query. */
  public ListTableVersionsResponse listTableVersions(ListTableVersionsRequest request) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("branch", request.getBranch());
    q.put("page_token", request.getPageToken());
    q.put("limit", request.getLimit());
    q.put("descending", request.getDescending());
    return calls.noBody(Operation.LIST_TABLE_VERSIONS, request, q, ListTableVersionsResponse.class);
  }

  /** Every version of a table (main branch), following every page. */
  public Stream<TableVersion> listAllTableVersions(List<String> id) {
    return Pages.stream(Operation.LIST_TABLE_VERSIONS, id,
        token -> listTableVersions(new ListTableVersionsRequest().id(id).pageToken(token)),
        ListTableVersionsResponse::getVersions, ListTableVersionsResponse::getPageToken);
  }

  public CreateTableVersionResponse createTableVersion(CreateTableVersionRequest request) {
    return calls.json(Operation.CREATE_TABLE_VERSION, request, CreateTableVersionResponse.class);
  }

  public DescribeTableVersionResponse describeTableVersion(DescribeTableVersionRequest request) {
    return calls.json(Operation.DESCRIBE_TABLE_VERSION, request,
        DescribeTableVersionResponse.class);
  }

  public BatchDeleteTableVersionsResponse batchDeleteTableVersions(
      BatchDeleteTableVersionsRequest request) {
    return calls.json(Operation.BATCH_DELETE_TABLE_VERSIONS, request,
        BatchDeleteTableVersionsResponse.class);
  }

  /** BatchCreateTableVersions: the route has no {@code {id}}; each entry names its table. */
  public BatchCreateTableVersionsResponse batchCreateTableVersions(
      BatchCreateTableVersionsRequest request) {
    return calls.json(Operation.BATCH_CREATE_TABLE_VERSIONS, request,
        BatchCreateTableVersionsResponse.class);
  }

  /** BatchCommitTables: the route has no {@code {id}}; each operation names its table. */
  public BatchCommitTablesResponse batchCommitTables(BatchCommitTablesRequest request) {
    return calls.json(Operation.BATCH_COMMIT_TABLES, request, BatchCommitTablesResponse.class);
  }

  // ---------------------------------------------------------------- data

  /**
   * CreateTable from an Arrow IPC stream. {@code mode}, {@code properties} and
   * {@code storage_options} travel as query parameters, the maps as JSON text.
   */
  public CreateTableResponse createTable(CreateTableRequest request, byte[] arrowStream) {
    return tableData.createTable(request, arrowStream);
  }

  /** CreateTable holding the rows of {@code data}. */
  public CreateTableResponse createTable(CreateTableRequest request, VectorSchemaRoot data) {
    return createTable(request, ArrowIpc.toStream(data));
  }

  /** CreateTable, empty, with {@code schema}. */
  public CreateTableResponse createTable(CreateTableRequest request, Schema schema) {
    return createTable(request, ArrowIpc.toStream(schema, List.of()));
  }

  /** InsertIntoTable: {@code mode} is append (default) or overwrite. */
  public InsertIntoTableResponse insertIntoTable(
      InsertIntoTableRequest request, byte[] arrowStream) {
    return tableData.insertIntoTable(request, arrowStream);
  }

  public InsertIntoTableResponse insertIntoTable(
      InsertIntoTableRequest request, VectorSchemaRoot data) {
    return insertIntoTable(request, ArrowIpc.toStream(data));
  }

  public MergeInsertIntoTableResponse mergeInsertIntoTable(
      MergeInsertIntoTableRequest request, byte[] arrowStream) {
    return tableData.mergeInsertIntoTable(request, arrowStream);
  }

  public MergeInsertIntoTableResponse mergeInsertIntoTable(
      MergeInsertIntoTableRequest request, VectorSchemaRoot data) {
    return mergeInsertIntoTable(request, ArrowIpc.toStream(data));
  }

  public UpdateTableResponse updateTable(UpdateTableRequest request) {
    return calls.json(Operation.UPDATE_TABLE, request, UpdateTableResponse.class);
  }

  public DeleteFromTableResponse deleteFromTable(DeleteFromTableRequest request) {
    return calls.json(Operation.DELETE_FROM_TABLE, request, DeleteFromTableResponse.class);
  }

  /** QueryTable, raw: the server's Arrow IPC file as bytes. */
  public byte[] queryTableIpc(QueryTableRequest request) {
    return tableData.queryTableIpc(request);
  }

  /**
   * QueryTable, decoded into batches owned by {@code allocator}. The caller closes the result.
   * A stream-format answer is accepted as well as the file format the spec names.
   */
  public ArrowBatches queryTable(QueryTableRequest request, BufferAllocator allocator) {
    return tableData.queryTable(request, allocator);
  }

  /**
   * CountTableRows. The spec's answer is a bare integer; {@code {"count": n}} is accepted too.
   */
  public long countTableRows(CountTableRowsRequest request) {
    return tableData.countTableRows(request);
  }

  /** ExplainTableQueryPlan: the plan as human-readable text. */
  public String explainTableQueryPlan(ExplainTableQueryPlanRequest request) {
    return tableData.textAnswer(Operation.EXPLAIN_TABLE_QUERY_PLAN, request, "plan");
  }

  /** AnalyzeTableQueryPlan: runs the query and answers its analysis as text. */
  public String analyzeTableQueryPlan(AnalyzeTableQueryPlanRequest request) {
    return tableData.textAnswer(Operation.ANALYZE_TABLE_QUERY_PLAN, request, "analysis");
  }

  // ---------------------------------------------------------------- indexes

  public CreateTableIndexResponse createTableIndex(CreateTableIndexRequest request) {
    return calls.json(Operation.CREATE_TABLE_INDEX, request, CreateTableIndexResponse.class);
  }

  /** CreateTableScalarIndex: same request as CreateTableIndex, on its own route. */
  public CreateTableScalarIndexResponse createTableScalarIndex(CreateTableIndexRequest request) {
    return calls.json(Operation.CREATE_TABLE_SCALAR_INDEX, request,
        CreateTableScalarIndexResponse.class);
  }

  /** One page of indexes; here paging travels in the JSON body. */
  public ListTableIndicesResponse listTableIndices(ListTableIndicesRequest request) {
    return calls.json(Operation.LIST_TABLE_INDICES, request, ListTableIndicesResponse.class);
  }

  /** Every index of a table (latest version, main branch), following every page. */
  public Stream<IndexContent> listAllTableIndices(List<String> id) {
    return Pages.stream(Operation.LIST_TABLE_INDICES, id,
        token -> listTableIndices(new ListTableIndicesRequest().id(id).pageToken(token)),
        ListTableIndicesResponse::getIndexes, ListTableIndicesResponse::getPageToken);
  }

  public DescribeTableIndexStatsResponse describeTableIndexStats(
      DescribeTableIndexStatsRequest request) {
    Operation op = Operation.DESCRIBE_TABLE_INDEX_STATS;
    return calls.send(op, request, Map.of(), RestCalls.indexName(op, request.getIndexName()),
        calls.jsonBody(request), DescribeTableIndexStatsResponse.class);
  }

  /** DropTableIndex: no body; the index name is in the path and the branch in the query. */
  public DropTableIndexResponse dropTableIndex(DropTableIndexRequest request) {
    Operation op = Operation.DROP_TABLE_INDEX;
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("branch", request.getBranch());
    return calls.send(op, request, q, RestCalls.indexName(op, request.getIndexName()), null,
        DropTableIndexResponse.class);
  }

  // ---------------------------------------------------------------- tags

  /** One page of tags. The route takes no body: paging goes in the query. */
  public ListTableTagsResponse listTableTags(ListTableTagsRequest request) {
    return calls.noBody(Operation.LIST_TABLE_TAGS, request,
        RestCalls.pageQuery(request.getPageToken(),
        request.getLimit()), ListTableTagsResponse.class);
  }

  /** Every tag of a table, following every page, in the server's order. */
  public Map<String, TagContents> listAllTableTags(List<String> id) {
    Map<String, TagContents> out = new LinkedHashMap<>();
    Pages.stream(Operation.LIST_TABLE_TAGS, id,
            token -> listTableTags(new ListTableTagsRequest().id(id).pageToken(token)),
            (ListTableTagsResponse p) -> entries(p.getTags()), ListTableTagsResponse::getPageToken)
        .forEach(e -> out.put(e.getKey(), e.getValue()));
    return out;
  }

  public GetTableTagVersionResponse getTableTagVersion(GetTableTagVersionRequest request) {
    return calls.json(Operation.GET_TABLE_TAG_VERSION, request, GetTableTagVersionResponse.class);
  }

  public CreateTableTagResponse createTableTag(CreateTableTagRequest request) {
    return calls.json(Operation.CREATE_TABLE_TAG, request, CreateTableTagResponse.class);
  }

  public DeleteTableTagResponse deleteTableTag(DeleteTableTagRequest request) {
    return calls.json(Operation.DELETE_TABLE_TAG, request, DeleteTableTagResponse.class);
  }

  public UpdateTableTagResponse updateTableTag(UpdateTableTagRequest request) {
    return calls.json(Operation.UPDATE_TABLE_TAG, request, UpdateTableTagResponse.class);
  }

  // ---------------------------------------------------------------- branches

  /** One page of branches. The route takes no body: paging goes in the query. */
  public ListTableBranchesResponse listTableBranches(ListTableBranchesRequest request) {
    return calls.noBody(Operation.LIST_TABLE_BRANCHES, request,
        RestCalls.pageQuery(request.getPageToken(),
        request.getLimit()), ListTableBranchesResponse.class);
  }

  /** Every branch of a table, following every page, in the server's order. */
  public Map<String, BranchContents> listAllTableBranches(List<String> id) {
    Map<String, BranchContents> out = new LinkedHashMap<>();
    Pages.stream(Operation.LIST_TABLE_BRANCHES, id,
            token -> listTableBranches(new ListTableBranchesRequest().id(id).pageToken(token)),
            (ListTableBranchesResponse p) -> entries(p.getBranches()),
            ListTableBranchesResponse::getPageToken)
        .forEach(e -> out.put(e.getKey(), e.getValue()));
    return out;
  }

  public CreateTableBranchResponse createTableBranch(CreateTableBranchRequest request) {
    return calls.json(Operation.CREATE_TABLE_BRANCH, request, CreateTableBranchResponse.class);
  }

  public DeleteTableBranchResponse deleteTableBranch(DeleteTableBranchRequest request) {
    return calls.json(Operation.DELETE_TABLE_BRANCH, request, DeleteTableBranchResponse.class);
  }

  // ---------------------------------------------------------------- transactions

  public DescribeTransactionResponse describeTransaction(DescribeTransactionRequest request) {
    return calls.json(Operation.DESCRIBE_TRANSACTION, request, DescribeTransactionResponse.class);
  }

  public AlterTransactionResponse alterTransaction(AlterTransactionRequest request) {
    return calls.json(Operation.ALTER_TRANSACTION, request, AlterTransactionResponse.class);
  }

  // ---------------------------------------------------------------- materialized views

  /** CreateMaterializedView: the server answers 201 with the new table version. */
  public CreateMaterializedViewResponse createMaterializedView(
      CreateMaterializedViewRequest request) {
    return calls.json(Operation.CREATE_MATERIALIZED_VIEW, request,
        CreateMaterializedViewResponse.class);
  }

  /** RefreshMaterializedView: accepted asynchronously (HTTP 202) with a job id. */
  public RefreshMaterializedViewResponse refreshMaterializedView(
      RefreshMaterializedViewRequest request) {
    return calls.json(Operation.REFRESH_MATERIALIZED_VIEW, request,
        RefreshMaterializedViewResponse.class);
  }

  /** The view service's job of a view (an extension route of this project's service). */
  public MaterializedViewJob describeMaterializedViewJob(
      DescribeMaterializedViewJobRequest request) {
    return calls.json(Operation.DESCRIBE_MATERIALIZED_VIEW_JOB, request, MaterializedViewJob.class);
  }

  /** One page of the view service's jobs of a view, newest first (an extension route). */
  public ListMaterializedViewJobsResponse listMaterializedViewJobs(
      ListMaterializedViewJobsRequest request) {
    return calls.json(Operation.LIST_MATERIALIZED_VIEW_JOBS, request,
        ListMaterializedViewJobsResponse.class);
  }

  /** Cancels a view's job waiting or running in the view service (an extension route). */
  public MaterializedViewJob cancelMaterializedViewJob(CancelMaterializedViewJobRequest request) {
    return calls.json(Operation.CANCEL_MATERIALIZED_VIEW_JOB, request, MaterializedViewJob.class);
  }

  /** A page's map entries; a page without the map has none. */
  private static <V> java.util.Set<Map.Entry<String, V>> entries(Map<String, V> page) {
    return page == null ? java.util.Set.of() : page.entrySet();
  }

  /** Whether {@link #close} has run; calls after it fail with an IllegalStateException. */
  public boolean isClosed() {
    return transport.isClosed();
  }

  /** Releases the connection pool and the OAuth2 refresh thread; idempotent. */
  @Override
  public void close() {
    transport.close();
  }
}
