package io.lancerest.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lancerest.client.arrow.ArrowBatches;
import io.lancerest.client.arrow.ArrowIpc;
import io.lancerest.client.error.ClientConfigException;
import io.lancerest.client.error.ErrorDetails;
import io.lancerest.client.error.InvalidInputException;
import io.lancerest.client.error.InvalidResponseException;
import io.lancerest.client.error.LanceRestException;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.client.internal.RecordContext;
import io.lancerest.client.model.AlterTableAddColumnsRequest;
import io.lancerest.client.model.AlterTableAddColumnsResponse;
import io.lancerest.client.model.AlterTableAlterColumnsRequest;
import io.lancerest.client.model.AlterTableAlterColumnsResponse;
import io.lancerest.client.model.AlterTableBackfillColumnsRequest;
import io.lancerest.client.model.AlterTableBackfillColumnsResponse;
import io.lancerest.client.model.AlterTableDropColumnsRequest;
import io.lancerest.client.model.AlterTableDropColumnsResponse;
import io.lancerest.client.model.AlterTransactionRequest;
import io.lancerest.client.model.AlterTransactionResponse;
import io.lancerest.client.model.AnalyzeTableQueryPlanRequest;
import io.lancerest.client.model.BatchCommitTablesRequest;
import io.lancerest.client.model.BatchCommitTablesResponse;
import io.lancerest.client.model.BatchCreateTableVersionsRequest;
import io.lancerest.client.model.BatchCreateTableVersionsResponse;
import io.lancerest.client.model.BatchDeleteTableVersionsRequest;
import io.lancerest.client.model.BatchDeleteTableVersionsResponse;
import io.lancerest.client.model.BranchContents;
import io.lancerest.client.model.CountTableRowsRequest;
import io.lancerest.client.model.CreateMaterializedViewRequest;
import io.lancerest.client.model.CreateMaterializedViewResponse;
import io.lancerest.client.model.CreateNamespaceRequest;
import io.lancerest.client.model.CreateNamespaceResponse;
import io.lancerest.client.model.CreateTableBranchRequest;
import io.lancerest.client.model.CreateTableBranchResponse;
import io.lancerest.client.model.CreateTableIndexRequest;
import io.lancerest.client.model.CreateTableIndexResponse;
import io.lancerest.client.model.CreateTableRequest;
import io.lancerest.client.model.CreateTableResponse;
import io.lancerest.client.model.CreateTableScalarIndexResponse;
import io.lancerest.client.model.CreateTableTagRequest;
import io.lancerest.client.model.CreateTableTagResponse;
import io.lancerest.client.model.CreateTableVersionRequest;
import io.lancerest.client.model.CreateTableVersionResponse;
import io.lancerest.client.model.DeclareTableRequest;
import io.lancerest.client.model.DeclareTableResponse;
import io.lancerest.client.model.DeleteFromTableRequest;
import io.lancerest.client.model.DeleteFromTableResponse;
import io.lancerest.client.model.DeleteTableBranchRequest;
import io.lancerest.client.model.DeleteTableBranchResponse;
import io.lancerest.client.model.DeleteTableTagRequest;
import io.lancerest.client.model.DeleteTableTagResponse;
import io.lancerest.client.model.DeregisterTableRequest;
import io.lancerest.client.model.DeregisterTableResponse;
import io.lancerest.client.model.DescribeMaterializedViewJobRequest;
import io.lancerest.client.model.DescribeNamespaceRequest;
import io.lancerest.client.model.DescribeNamespaceResponse;
import io.lancerest.client.model.DescribeTableIndexStatsRequest;
import io.lancerest.client.model.DescribeTableIndexStatsResponse;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DescribeTableResponse;
import io.lancerest.client.model.DescribeTableVersionRequest;
import io.lancerest.client.model.DescribeTableVersionResponse;
import io.lancerest.client.model.DescribeTransactionRequest;
import io.lancerest.client.model.DescribeTransactionResponse;
import io.lancerest.client.model.DropNamespaceRequest;
import io.lancerest.client.model.DropNamespaceResponse;
import io.lancerest.client.model.DropTableIndexRequest;
import io.lancerest.client.model.DropTableIndexResponse;
import io.lancerest.client.model.DropTableRequest;
import io.lancerest.client.model.DropTableResponse;
import io.lancerest.client.model.ExplainTableQueryPlanRequest;
import io.lancerest.client.model.GetTableStatsRequest;
import io.lancerest.client.model.GetTableStatsResponse;
import io.lancerest.client.model.GetTableTagVersionRequest;
import io.lancerest.client.model.GetTableTagVersionResponse;
import io.lancerest.client.model.Identity;
import io.lancerest.client.model.IndexContent;
import io.lancerest.client.model.InsertIntoTableRequest;
import io.lancerest.client.model.InsertIntoTableResponse;
import io.lancerest.client.model.LanceRequest;
import io.lancerest.client.model.ListAllTablesRequest;
import io.lancerest.client.model.ListMaterializedViewJobsRequest;
import io.lancerest.client.model.ListMaterializedViewJobsResponse;
import io.lancerest.client.model.ListNamespacesRequest;
import io.lancerest.client.model.ListNamespacesResponse;
import io.lancerest.client.model.ListTableBranchesRequest;
import io.lancerest.client.model.ListTableBranchesResponse;
import io.lancerest.client.model.ListTableIndicesRequest;
import io.lancerest.client.model.ListTableIndicesResponse;
import io.lancerest.client.model.ListTableTagsRequest;
import io.lancerest.client.model.ListTableTagsResponse;
import io.lancerest.client.model.ListTableVersionsRequest;
import io.lancerest.client.model.ListTableVersionsResponse;
import io.lancerest.client.model.ListTablesRequest;
import io.lancerest.client.model.ListTablesResponse;
import io.lancerest.client.model.MaterializedViewJob;
import io.lancerest.client.model.MergeInsertIntoTableRequest;
import io.lancerest.client.model.MergeInsertIntoTableResponse;
import io.lancerest.client.model.NamespaceExistsRequest;
import io.lancerest.client.model.QueryTableRequest;
import io.lancerest.client.model.RefreshMaterializedViewRequest;
import io.lancerest.client.model.RefreshMaterializedViewResponse;
import io.lancerest.client.model.RegisterTableRequest;
import io.lancerest.client.model.RegisterTableResponse;
import io.lancerest.client.model.RenameTableRequest;
import io.lancerest.client.model.RenameTableResponse;
import io.lancerest.client.model.RestoreTableRequest;
import io.lancerest.client.model.RestoreTableResponse;
import io.lancerest.client.model.TableExistsRequest;
import io.lancerest.client.model.TableVersion;
import io.lancerest.client.model.TagContents;
import io.lancerest.client.model.UpdateFieldMetadataRequest;
import io.lancerest.client.model.UpdateFieldMetadataResponse;
import io.lancerest.client.model.UpdateTableRequest;
import io.lancerest.client.model.UpdateTableResponse;
import io.lancerest.client.model.UpdateTableSchemaMetadataRequest;
import io.lancerest.client.model.UpdateTableSchemaMetadataResponse;
import io.lancerest.client.model.UpdateTableTagRequest;
import io.lancerest.client.model.UpdateTableTagResponse;
import io.lancerest.client.spec.Operation;
import java.io.Closeable;
import java.io.IOException;
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
  private static final String CONTEXT_HEADER = "header.";
  private static final String CONTEXT_HEADERS = "headers.";

  private final HttpTransport transport;
  private final ObjectMapper json = LanceJson.mapper();

  public LanceRestClient(HttpTransport transport) {
    this.transport = transport;
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
    return callJson(Operation.CREATE_NAMESPACE, request, Map.of(), CreateNamespaceResponse.class);
  }

  /** One page of child namespaces. */
  public ListNamespacesResponse listNamespaces(ListNamespacesRequest request) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("page_token", request.pageToken());
    q.put("limit", request.limit());
    return callNoBody(Operation.LIST_NAMESPACES, request, q, ListNamespacesResponse.class);
  }

  /** Every child namespace of {@code parent}, following every page. */
  public Stream<String> listAllNamespaces(List<String> parent) {
    return Pages.stream(Operation.LIST_NAMESPACES, parent,
        token -> listNamespaces(new ListNamespacesRequest(parent, token, null)),
        ListNamespacesResponse::namespaces, ListNamespacesResponse::pageToken);
  }

  public DescribeNamespaceResponse describeNamespace(DescribeNamespaceRequest request) {
    return callJson(
        Operation.DESCRIBE_NAMESPACE, request, Map.of(), DescribeNamespaceResponse.class);
  }

  public DropNamespaceResponse dropNamespace(DropNamespaceRequest request) {
    return callJson(Operation.DROP_NAMESPACE, request, Map.of(), DropNamespaceResponse.class);
  }

  /** NamespaceExists: returns normally when it exists, throws NamespaceNotFoundException if not. */
  public void namespaceExists(NamespaceExistsRequest request) {
    call(Operation.NAMESPACE_EXISTS, request, Map.of(), jsonBody(request));
  }

  /** True when the namespace exists; false only for a genuine not-found, other errors propagate. */
  public boolean namespaceExists(List<String> id) {
    try {
      namespaceExists(new NamespaceExistsRequest(id));
      return true;
    } catch (NotFoundException e) {
      return false;
    }
  }

  /** One page of the tables in a namespace. */
  public ListTablesResponse listTables(ListTablesRequest request) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("page_token", request.pageToken());
    q.put("limit", request.limit());
    q.put("include_declared", request.includeDeclared());
    return callNoBody(Operation.LIST_TABLES, request, q, ListTablesResponse.class);
  }

  /** Every table of a namespace, following every page. */
  public Stream<String> listAllTables(List<String> namespace) {
    return Pages.stream(Operation.LIST_TABLES, namespace,
        token -> listTables(new ListTablesRequest(namespace, token, null)),
        ListTablesResponse::tables, ListTablesResponse::pageToken);
  }

  /**
   * ListAllTables ({@code GET /v1/table}): one page of the tables of the whole catalog, named by
   * their full identifiers joined with the delimiter. Not to be confused with
   * {@link #listAllTables(List)}, which follows the pages of one namespace.
   */
  public ListTablesResponse listAllTables(ListAllTablesRequest request) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("page_token", request.pageToken());
    q.put("limit", request.limit());
    q.put("include_declared", request.includeDeclared());
    return callNoBody(Operation.LIST_ALL_TABLES, request, q, ListTablesResponse.class);
  }

  /** Every table of the catalog (ListAllTables), following every page. */
  public Stream<String> streamAllTables() {
    return Pages.stream(Operation.LIST_ALL_TABLES, null,
        token -> listAllTables(new ListAllTablesRequest(token, null, null)),
        ListTablesResponse::tables, ListTablesResponse::pageToken);
  }

  // ---------------------------------------------------------------- table metadata

  public DescribeTableResponse describeTable(DescribeTableRequest request) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("with_table_uri", request.withTableUri());
    q.put("load_detailed_metadata", request.loadDetailedMetadata());
    q.put("check_declared", request.checkDeclared());
    return callJson(Operation.DESCRIBE_TABLE, request, q, DescribeTableResponse.class);
  }

  /** TableExists: returns normally when it exists, throws a NotFoundException if not. */
  public void tableExists(TableExistsRequest request) {
    call(Operation.TABLE_EXISTS, request, Map.of(), jsonBody(request));
  }

  /**
   * True when the table exists; false only for a genuine not-found (of the table or of its
   * namespace). Every other failure propagates, so an outage never reads as "no such table".
   */
  public boolean tableExists(List<String> id) {
    try {
      tableExists(new TableExistsRequest(id, null));
      return true;
    } catch (NotFoundException e) {
      return false;
    } catch (InvalidInputException rejected) {
      // The upstream dir server answers 400 ("Multi-level table IDs are only supported when
      // manifest mode is enabled") to TableExists for a nested table it does not know, while
      // DescribeTable answers a proper 404. Ask again that way rather than guess.
      try {
        describeTable(DescribeTableRequest.of(id));
        return true;
      } catch (NotFoundException e) {
        return false;
      } catch (LanceRestException other) {
        rejected.addSuppressed(other);
        throw rejected;
      }
    }
  }

  public RegisterTableResponse registerTable(RegisterTableRequest request) {
    return callJson(Operation.REGISTER_TABLE, request, Map.of(), RegisterTableResponse.class);
  }

  public DeclareTableResponse declareTable(DeclareTableRequest request) {
    return callJson(Operation.DECLARE_TABLE, request, Map.of(), DeclareTableResponse.class);
  }

  /** DropTable: removes the table and its data. The route takes no body. */
  public DropTableResponse dropTable(DropTableRequest request) {
    return callNoBody(Operation.DROP_TABLE, request, Map.of(), DropTableResponse.class);
  }

  /** DeregisterTable: forgets the table but leaves its data in place. */
  public DeregisterTableResponse deregisterTable(DeregisterTableRequest request) {
    return callJson(Operation.DEREGISTER_TABLE, request, Map.of(), DeregisterTableResponse.class);
  }

  public RenameTableResponse renameTable(RenameTableRequest request) {
    return callJson(Operation.RENAME_TABLE, request, Map.of(), RenameTableResponse.class);
  }

  public RestoreTableResponse restoreTable(RestoreTableRequest request) {
    return callJson(Operation.RESTORE_TABLE, request, Map.of(), RestoreTableResponse.class);
  }

  /**
   * UpdateTableSchemaMetadata. On the wire both the request and the answer are a bare string
   * map (the branch goes in the query); the response record carries the map as {@code metadata}.
   */
  public UpdateTableSchemaMetadataResponse updateTableSchemaMetadata(
      UpdateTableSchemaMetadataRequest request) {
    Operation op = Operation.UPDATE_TABLE_SCHEMA_METADATA;
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("branch", request.branch());
    Map<String, String> metadata = request.metadata() == null ? Map.of() : request.metadata();
    RestResponse r = call(op, request, q, jsonBody(metadata));
    JsonNode node = readTree(op, request.id(), r);
    ObjectNode wrapped = json.createObjectNode();
    if (node.isObject() && node.has("metadata") && node.get("metadata").isObject()) {
      // A server that follows the schema rather than the route answers {metadata, ...}.
      wrapped.setAll((ObjectNode) node);
    } else if (node.isObject()) {
      wrapped.set("metadata", node);
    }
    return fromTree(op, request.id(), r, wrapped, UpdateTableSchemaMetadataResponse.class);
  }

  public UpdateFieldMetadataResponse updateFieldMetadata(UpdateFieldMetadataRequest request) {
    return callJson(
        Operation.UPDATE_FIELD_METADATA, request, Map.of(), UpdateFieldMetadataResponse.class);
  }

  public AlterTableAddColumnsResponse alterTableAddColumns(AlterTableAddColumnsRequest request) {
    return callJson(
        Operation.ALTER_TABLE_ADD_COLUMNS, request, Map.of(), AlterTableAddColumnsResponse.class);
  }

  public AlterTableAlterColumnsResponse alterTableAlterColumns(
      AlterTableAlterColumnsRequest request) {
    return callJson(Operation.ALTER_TABLE_ALTER_COLUMNS, request, Map.of(),
        AlterTableAlterColumnsResponse.class);
  }

  public AlterTableDropColumnsResponse alterTableDropColumns(
      AlterTableDropColumnsRequest request) {
    return callJson(Operation.ALTER_TABLE_DROP_COLUMNS, request, Map.of(),
        AlterTableDropColumnsResponse.class);
  }

  /** AlterTableBackfillColumns: accepted asynchronously (HTTP 202) with a job id. */
  public AlterTableBackfillColumnsResponse alterTableBackfillColumns(
      AlterTableBackfillColumnsRequest request) {
    return callJson(Operation.ALTER_TABLE_BACKFILL_COLUMNS, request, Map.of(),
        AlterTableBackfillColumnsResponse.class);
  }

  public GetTableStatsResponse getTableStats(GetTableStatsRequest request) {
    return callJson(Operation.GET_TABLE_STATS, request, Map.of(), GetTableStatsResponse.class);
  }

  // ---------------------------------------------------------------- versions

  /** One page of versions. The route takes no body: paging and branch go in the query. */
  public ListTableVersionsResponse listTableVersions(ListTableVersionsRequest request) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("branch", request.branch());
    q.put("page_token", request.pageToken());
    q.put("limit", request.limit());
    q.put("descending", request.descending());
    return callNoBody(
        Operation.LIST_TABLE_VERSIONS, request, q, ListTableVersionsResponse.class);
  }

  /** Every version of a table (main branch), following every page. */
  public Stream<TableVersion> listAllTableVersions(List<String> id) {
    return Pages.stream(Operation.LIST_TABLE_VERSIONS, id,
        token -> listTableVersions(new ListTableVersionsRequest(id, null, token, null, null)),
        ListTableVersionsResponse::versions, ListTableVersionsResponse::pageToken);
  }

  public CreateTableVersionResponse createTableVersion(CreateTableVersionRequest request) {
    return callJson(
        Operation.CREATE_TABLE_VERSION, request, Map.of(), CreateTableVersionResponse.class);
  }

  public DescribeTableVersionResponse describeTableVersion(DescribeTableVersionRequest request) {
    return callJson(
        Operation.DESCRIBE_TABLE_VERSION, request, Map.of(), DescribeTableVersionResponse.class);
  }

  public BatchDeleteTableVersionsResponse batchDeleteTableVersions(
      BatchDeleteTableVersionsRequest request) {
    return callJson(Operation.BATCH_DELETE_TABLE_VERSIONS, request, Map.of(),
        BatchDeleteTableVersionsResponse.class);
  }

  /** BatchCreateTableVersions: the route has no {@code {id}}; each entry names its table. */
  public BatchCreateTableVersionsResponse batchCreateTableVersions(
      BatchCreateTableVersionsRequest request) {
    return callJson(Operation.BATCH_CREATE_TABLE_VERSIONS, request, Map.of(),
        BatchCreateTableVersionsResponse.class);
  }

  /** BatchCommitTables: the route has no {@code {id}}; each operation names its table. */
  public BatchCommitTablesResponse batchCommitTables(BatchCommitTablesRequest request) {
    return callJson(
        Operation.BATCH_COMMIT_TABLES, request, Map.of(), BatchCommitTablesResponse.class);
  }

  // ---------------------------------------------------------------- data

  /**
   * CreateTable from an Arrow IPC stream. {@code mode}, {@code properties} and
   * {@code storage_options} travel as query parameters, the maps as JSON text.
   */
  public CreateTableResponse createTable(CreateTableRequest request, byte[] arrowStream) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("mode", request.mode());
    q.put("properties", jsonQuery(request.properties()));
    q.put("storage_options", jsonQuery(request.storageOptions()));
    RestResponse r = call(Operation.CREATE_TABLE, request, q, arrowBody(arrowStream));
    return read(Operation.CREATE_TABLE, request.id(), r, CreateTableResponse.class);
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
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("branch", request.branch());
    q.put("mode", request.mode());
    RestResponse r = call(Operation.INSERT_INTO_TABLE, request, q, arrowBody(arrowStream));
    return read(Operation.INSERT_INTO_TABLE, request.id(), r, InsertIntoTableResponse.class);
  }

  public InsertIntoTableResponse insertIntoTable(
      InsertIntoTableRequest request, VectorSchemaRoot data) {
    return insertIntoTable(request, ArrowIpc.toStream(data));
  }

  public MergeInsertIntoTableResponse mergeInsertIntoTable(
      MergeInsertIntoTableRequest request, byte[] arrowStream) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("branch", request.branch());
    q.put("on", request.on());
    q.put("when_matched_update_all", request.whenMatchedUpdateAll());
    q.put("when_matched_update_all_filt", request.whenMatchedUpdateAllFilt());
    q.put("when_not_matched_insert_all", request.whenNotMatchedInsertAll());
    q.put("when_not_matched_by_source_delete", request.whenNotMatchedBySourceDelete());
    q.put("when_not_matched_by_source_delete_filt", request.whenNotMatchedBySourceDeleteFilt());
    q.put("timeout", request.timeout());
    q.put("use_index", request.useIndex());
    Operation op = Operation.MERGE_INSERT_INTO_TABLE;
    RestResponse r = call(op, request, q, arrowBody(arrowStream));
    return read(op, request.id(), r, MergeInsertIntoTableResponse.class);
  }

  public MergeInsertIntoTableResponse mergeInsertIntoTable(
      MergeInsertIntoTableRequest request, VectorSchemaRoot data) {
    return mergeInsertIntoTable(request, ArrowIpc.toStream(data));
  }

  public UpdateTableResponse updateTable(UpdateTableRequest request) {
    return callJson(Operation.UPDATE_TABLE, request, Map.of(), UpdateTableResponse.class);
  }

  public DeleteFromTableResponse deleteFromTable(DeleteFromTableRequest request) {
    return callJson(
        Operation.DELETE_FROM_TABLE, request, Map.of(), DeleteFromTableResponse.class);
  }

  /** QueryTable, raw: the server's Arrow IPC file as bytes. */
  public byte[] queryTableIpc(QueryTableRequest request) {
    return call(Operation.QUERY_TABLE, request, Map.of(), jsonBody(request)).body();
  }

  /**
   * QueryTable, decoded into batches owned by {@code allocator}. The caller closes the result.
   * A stream-format answer is accepted as well as the file format the spec names.
   */
  public ArrowBatches queryTable(QueryTableRequest request, BufferAllocator allocator) {
    RestResponse r = call(Operation.QUERY_TABLE, request, Map.of(), jsonBody(request));
    try {
      return ArrowIpc.read(r.body(), allocator);
    } catch (IOException | RuntimeException e) {
      throw invalidResponse(Operation.QUERY_TABLE, request.id(), r,
          "not an Arrow IPC file or stream: " + e.getClass().getSimpleName());
    }
  }

  /**
   * CountTableRows. The spec's answer is a bare integer; {@code {"count": n}} is accepted too.
   */
  public long countTableRows(CountTableRowsRequest request) {
    Operation op = Operation.COUNT_TABLE_ROWS;
    RestResponse r = call(op, request, Map.of(), jsonBody(request));
    JsonNode node = readTree(op, request.id(), r);
    JsonNode n = node.isObject() ? node.get("count") : node;
    if (n == null || !n.canConvertToLong() || !(n.isIntegralNumber() || n.isTextual())) {
      if (n != null && n.isTextual()) {
        try {
          return Long.parseLong(n.asText().trim());
        } catch (NumberFormatException e) {
          throw invalidResponse(op, request.id(), r, "expected an integer row count, got text"
              + " that is not one");
        }
      }
      throw invalidResponse(op, request.id(), r,
          "expected an integer row count, got " + (n == null ? node : n).getNodeType());
    }
    return n.asLong();
  }

  /** ExplainTableQueryPlan: the plan as human-readable text. */
  public String explainTableQueryPlan(ExplainTableQueryPlanRequest request) {
    return textAnswer(Operation.EXPLAIN_TABLE_QUERY_PLAN, request, "plan");
  }

  /** AnalyzeTableQueryPlan: runs the query and answers its analysis as text. */
  public String analyzeTableQueryPlan(AnalyzeTableQueryPlanRequest request) {
    return textAnswer(Operation.ANALYZE_TABLE_QUERY_PLAN, request, "analysis");
  }

  // ---------------------------------------------------------------- indexes

  public CreateTableIndexResponse createTableIndex(CreateTableIndexRequest request) {
    return callJson(
        Operation.CREATE_TABLE_INDEX, request, Map.of(), CreateTableIndexResponse.class);
  }

  /** CreateTableScalarIndex: same request as CreateTableIndex, on its own route. */
  public CreateTableScalarIndexResponse createTableScalarIndex(CreateTableIndexRequest request) {
    return callJson(Operation.CREATE_TABLE_SCALAR_INDEX, request, Map.of(),
        CreateTableScalarIndexResponse.class);
  }

  /** One page of indexes; here paging travels in the JSON body. */
  public ListTableIndicesResponse listTableIndices(ListTableIndicesRequest request) {
    return callJson(
        Operation.LIST_TABLE_INDICES, request, Map.of(), ListTableIndicesResponse.class);
  }

  /** Every index of a table (latest version, main branch), following every page. */
  public Stream<IndexContent> listAllTableIndices(List<String> id) {
    return Pages.stream(Operation.LIST_TABLE_INDICES, id,
        token -> listTableIndices(new ListTableIndicesRequest(id, null, null, token, null)),
        ListTableIndicesResponse::indexes, ListTableIndicesResponse::pageToken);
  }

  public DescribeTableIndexStatsResponse describeTableIndexStats(
      DescribeTableIndexStatsRequest request) {
    Operation op = Operation.DESCRIBE_TABLE_INDEX_STATS;
    RestResponse r = call(op, request, Map.of(), indexName(op, request.indexName()),
        jsonBody(request));
    return read(op, request.id(), r, DescribeTableIndexStatsResponse.class);
  }

  /** DropTableIndex: no body; the index name is in the path and the branch in the query. */
  public DropTableIndexResponse dropTableIndex(DropTableIndexRequest request) {
    Operation op = Operation.DROP_TABLE_INDEX;
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("branch", request.branch());
    RestResponse r = call(op, request, q, indexName(op, request.indexName()), null);
    return read(op, request.id(), r, DropTableIndexResponse.class);
  }

  // ---------------------------------------------------------------- tags

  /** One page of tags. The route takes no body: paging goes in the query. */
  public ListTableTagsResponse listTableTags(ListTableTagsRequest request) {
    return callNoBody(Operation.LIST_TABLE_TAGS, request, pageQuery(request.pageToken(),
        request.limit()), ListTableTagsResponse.class);
  }

  /** Every tag of a table, following every page, in the server's order. */
  public Map<String, TagContents> listAllTableTags(List<String> id) {
    Map<String, TagContents> out = new LinkedHashMap<>();
    Pages.stream(Operation.LIST_TABLE_TAGS, id,
            token -> listTableTags(new ListTableTagsRequest(id, token, null)),
            (ListTableTagsResponse p) -> p.tags().entrySet(), ListTableTagsResponse::pageToken)
        .forEach(e -> out.put(e.getKey(), e.getValue()));
    return out;
  }

  public GetTableTagVersionResponse getTableTagVersion(GetTableTagVersionRequest request) {
    return callJson(
        Operation.GET_TABLE_TAG_VERSION, request, Map.of(), GetTableTagVersionResponse.class);
  }

  public CreateTableTagResponse createTableTag(CreateTableTagRequest request) {
    return callJson(Operation.CREATE_TABLE_TAG, request, Map.of(), CreateTableTagResponse.class);
  }

  public DeleteTableTagResponse deleteTableTag(DeleteTableTagRequest request) {
    return callJson(Operation.DELETE_TABLE_TAG, request, Map.of(), DeleteTableTagResponse.class);
  }

  public UpdateTableTagResponse updateTableTag(UpdateTableTagRequest request) {
    return callJson(Operation.UPDATE_TABLE_TAG, request, Map.of(), UpdateTableTagResponse.class);
  }

  // ---------------------------------------------------------------- branches

  /** One page of branches. The route takes no body: paging goes in the query. */
  public ListTableBranchesResponse listTableBranches(ListTableBranchesRequest request) {
    return callNoBody(Operation.LIST_TABLE_BRANCHES, request, pageQuery(request.pageToken(),
        request.limit()), ListTableBranchesResponse.class);
  }

  /** Every branch of a table, following every page, in the server's order. */
  public Map<String, BranchContents> listAllTableBranches(List<String> id) {
    Map<String, BranchContents> out = new LinkedHashMap<>();
    Pages.stream(Operation.LIST_TABLE_BRANCHES, id,
            token -> listTableBranches(new ListTableBranchesRequest(id, token, null)),
            (ListTableBranchesResponse p) -> p.branches().entrySet(),
            ListTableBranchesResponse::pageToken)
        .forEach(e -> out.put(e.getKey(), e.getValue()));
    return out;
  }

  public CreateTableBranchResponse createTableBranch(CreateTableBranchRequest request) {
    return callJson(
        Operation.CREATE_TABLE_BRANCH, request, Map.of(), CreateTableBranchResponse.class);
  }

  public DeleteTableBranchResponse deleteTableBranch(DeleteTableBranchRequest request) {
    return callJson(
        Operation.DELETE_TABLE_BRANCH, request, Map.of(), DeleteTableBranchResponse.class);
  }

  // ---------------------------------------------------------------- transactions

  public DescribeTransactionResponse describeTransaction(DescribeTransactionRequest request) {
    return callJson(
        Operation.DESCRIBE_TRANSACTION, request, Map.of(), DescribeTransactionResponse.class);
  }

  public AlterTransactionResponse alterTransaction(AlterTransactionRequest request) {
    return callJson(
        Operation.ALTER_TRANSACTION, request, Map.of(), AlterTransactionResponse.class);
  }

  // ---------------------------------------------------------------- materialized views

  /** CreateMaterializedView: the server answers 201 with the new table version. */
  public CreateMaterializedViewResponse createMaterializedView(
      CreateMaterializedViewRequest request) {
    return callJson(Operation.CREATE_MATERIALIZED_VIEW, request, Map.of(),
        CreateMaterializedViewResponse.class);
  }

  /** RefreshMaterializedView: accepted asynchronously (HTTP 202) with a job id. */
  public RefreshMaterializedViewResponse refreshMaterializedView(
      RefreshMaterializedViewRequest request) {
    return callJson(Operation.REFRESH_MATERIALIZED_VIEW, request, Map.of(),
        RefreshMaterializedViewResponse.class);
  }

  /** The view service's job of a view (an extension route of this project's service). */
  public MaterializedViewJob describeMaterializedViewJob(
      DescribeMaterializedViewJobRequest request) {
    return callJson(Operation.DESCRIBE_MATERIALIZED_VIEW_JOB, request, Map.of(),
        MaterializedViewJob.class);
  }

  /** One page of the view service's jobs of a view, newest first (an extension route). */
  public ListMaterializedViewJobsResponse listMaterializedViewJobs(
      ListMaterializedViewJobsRequest request) {
    return callJson(Operation.LIST_MATERIALIZED_VIEW_JOBS, request, Map.of(),
        ListMaterializedViewJobsResponse.class);
  }

  // ---------------------------------------------------------------- plumbing

  /** Sends a JSON-bodied request and reads a JSON response of type {@code type}. */
  <T> T callJson(Operation op, LanceRequest request, Map<String, Object> query, Class<T> type) {
    RestResponse r = call(op, request, query, jsonBody(request));
    return read(op, request.id(), r, type);
  }

  /** Sends a request without a body (GET lists, and POST routes whose spec has no body). */
  <T> T callNoBody(Operation op, LanceRequest request, Map<String, Object> query, Class<T> type) {
    RestResponse r = call(op, request, query, null);
    return read(op, request.id(), r, type);
  }

  RestResponse call(
      Operation op, LanceRequest request, Map<String, Object> query, RestRequest.Body body) {
    return call(op, request, query, Map.of(), body);
  }

  RestResponse call(Operation op, LanceRequest request, Map<String, Object> query,
      Map<String, String> pathParams, RestRequest.Body body) {
    RestRequest.Builder b = RestRequest.builder(op)
        .id(op.pathTemplate().contains("{id}") ? safeId(request.id()) : null)
        .headers(headersOf(request.identity(), request.context()));
    query.forEach(b::query);
    pathParams.forEach(b::pathParam);
    if (body != null) {
      b.body(body.bytes(), body.mediaType());
    }
    return transport.execute(b.build());
  }

  private static List<String> safeId(List<String> id) {
    return id == null ? List.of() : id;
  }

  RestRequest.Body jsonBody(Object request) {
    try {
      // Records without fields, or with all fields null, serialise as {} as the spec asks.
      return new RestRequest.Body(json.writeValueAsBytes(request), RestRequest.Body.JSON);
    } catch (IOException e) {
      throw new IllegalArgumentException("Request could not be written as JSON: " + e, e);
    }
  }

  /** Per-call identity and context → HTTP headers. */
  static Map<String, String> headersOf(Identity identity, Map<String, String> context) {
    Map<String, String> h = new LinkedHashMap<>();
    if (context != null) {
      context.forEach((k, v) -> {
        if (k.startsWith(CONTEXT_HEADER) && k.length() > CONTEXT_HEADER.length()) {
          h.put(k.substring(CONTEXT_HEADER.length()), v);
        } else if (k.startsWith(CONTEXT_HEADERS) && k.length() > CONTEXT_HEADERS.length()) {
          h.put(k.substring(CONTEXT_HEADERS.length()), v);
        }
      });
    }
    if (identity != null) {
      if (identity.apiKey() != null) {
        h.put("x-api-key", identity.apiKey().reveal());
      }
      if (identity.authToken() != null) {
        h.put("Authorization", "Bearer " + identity.authToken().reveal());
      }
    }
    return h;
  }

  private static Map<String, Object> pageQuery(String pageToken, Integer limit) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("page_token", pageToken);
    q.put("limit", limit);
    return q;
  }

  private static Map<String, String> indexName(Operation op, String name) {
    if (name == null || name.isEmpty()) {
      throw new ClientConfigException(op.specName() + " needs the index name ('indexName')");
    }
    return Map.of("index_name", name);
  }

  private String jsonQuery(Map<String, String> map) {
    if (map == null || map.isEmpty()) {
      return null;
    }
    try {
      return json.writeValueAsString(map);
    } catch (IOException e) {
      throw new IllegalArgumentException("Map could not be written as JSON: " + e, e);
    }
  }

  private static RestRequest.Body arrowBody(byte[] arrowStream) {
    if (arrowStream == null || arrowStream.length == 0) {
      throw new ClientConfigException(
          "The Arrow IPC stream body is empty; send at least a schema message");
    }
    return new RestRequest.Body(arrowStream, RestRequest.Body.ARROW_STREAM);
  }

  /**
   * An answer the spec gives as a JSON string. Also accepted: an object holding the text under
   * {@code field}, and plain text (what several servers actually send).
   */
  private String textAnswer(Operation op, LanceRequest request, String field) {
    RestResponse r = call(op, request, Map.of(), jsonBody(request));
    try {
      JsonNode node = json.readTree(r.body());
      if (node != null && node.isTextual()) {
        return node.asText();
      }
      if (node != null && node.isObject() && node.hasNonNull(field)) {
        return node.get(field).asText();
      }
    } catch (IOException notJson) {
      // plain text: returned as is below
    }
    return r.bodyAsString();
  }

  /** The JSON tree of an answer; an empty body is {@code {}}. */
  JsonNode readTree(Operation op, List<String> id, RestResponse r) {
    try {
      JsonNode node = r.body().length == 0 ? json.createObjectNode() : json.readTree(r.body());
      return node == null || node.isMissingNode() || node.isNull()
          ? json.createObjectNode() : node;
    } catch (IOException e) {
      throw invalidResponse(op, id, r, e);
    }
  }

  /** Reads a JSON response, with the response headers as {@code context} entries. */
  <T> T read(Operation op, List<String> id, RestResponse r, Class<T> type) {
    if (r.body().length > 0 && RecordContext.supports(type)) {
      // Fast path: decode the bytes directly. Any failure (or a JSON null) goes through the
      // tree path below, which then decides the answer or the error.
      T direct = null;
      try {
        direct = json.readValue(r.body(), type);
      } catch (IOException | RuntimeException retriedBelow) {
        // reported by the tree path
      }
      if (direct != null) {
        return RecordContext.withContext(direct, contextOf(r));
      }
    }
    JsonNode node = readTree(op, id, r);
    if (!node.isObject()) {
      throw invalidResponse(op, id, r, "expected a JSON object, got " + node.getNodeType());
    }
    return fromTree(op, id, r, (ObjectNode) node, type);
  }

  private <T> T fromTree(
      Operation op, List<String> id, RestResponse r, ObjectNode node, Class<T> type) {
    node.set("context", json.valueToTree(contextOf(r)));
    try {
      return json.treeToValue(node, type);
    } catch (IOException | IllegalArgumentException e) {
      throw invalidResponse(op, id, r, e);
    }
  }

  /** Response headers as {@code context} entries: {@code header.<lower-case name>}. */
  private static Map<String, String> contextOf(RestResponse r) {
    Map<String, String> ctx = new LinkedHashMap<>();
    r.headers().forEach((k, v) -> ctx.put(CONTEXT_HEADER + k, String.join(",", v)));
    return ctx;
  }

  /**
   * A 2xx answer whose body could not be read. The reason quotes nothing of the body and the
   * exception carries no cause: parser messages (Jackson's, or Long.parseLong's) quote the body,
   * and a DescribeTable body may hold vended storage credentials.
   */
  static LanceRestException invalidResponse(
      Operation op, List<String> id, RestResponse r, Exception e) {
    return invalidResponse(op, id, r, InvalidResponseException.reasonWithoutContent(e));
  }

  /** As above, with a reason written by this client (it must not quote the body). */
  static LanceRestException invalidResponse(
      Operation op, List<String> id, RestResponse r, String reason) {
    return new InvalidResponseException(new ErrorDetails(
        "the server answered HTTP " + r.status() + " with a body that is not a valid "
            + op.specName() + " response (" + reason + ")",
        "Check that 'uri' points at a Lance REST namespace server",
        null, r.status(), op, id == null ? null : Identifiers.display(id), null,
        r.header("x-request-id")), null);
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
