package io.lancerest.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.lancerest.client.arrow.ArrowBatches;
import io.lancerest.client.arrow.ArrowIpc;
import io.lancerest.client.error.ClientConfigException;
import io.lancerest.client.model.CountTableRowsRequest;
import io.lancerest.client.model.CreateTableRequest;
import io.lancerest.client.model.CreateTableResponse;
import io.lancerest.client.model.InsertIntoTableRequest;
import io.lancerest.client.model.InsertIntoTableResponse;
import io.lancerest.client.model.LanceRequest;
import io.lancerest.client.model.MergeInsertIntoTableRequest;
import io.lancerest.client.model.MergeInsertIntoTableResponse;
import io.lancerest.client.model.QueryTableRequest;
import io.lancerest.client.spec.Operation;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The table data operations whose bodies are Arrow IPC streams (create, insert, merge-insert) or
 * whose answers are not JSON records (query, count, explain, analyze).
 */
final class TableDataCalls {
  private final RestCalls calls;
  private final RestAnswers answers;

  TableDataCalls(RestCalls calls) {
    this.calls = calls;
    this.answers = calls.answers();
  }

  /** {@code mode}, {@code properties} and {@code storage_options} go in the query. */
  CreateTableResponse createTable(CreateTableRequest request, byte[] arrowStream) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("mode", request.mode());
    q.put("properties", calls.jsonQuery(request.properties()));
    q.put("storage_options", calls.jsonQuery(request.storageOptions()));
    RestResponse r = calls.call(Operation.CREATE_TABLE, request, q, arrowBody(arrowStream));
    return answers.read(Operation.CREATE_TABLE, request.id(), r, CreateTableResponse.class);
  }

  InsertIntoTableResponse insertIntoTable(InsertIntoTableRequest request, byte[] arrowStream) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("branch", request.branch());
    q.put("mode", request.mode());
    RestResponse r = calls.call(Operation.INSERT_INTO_TABLE, request, q, arrowBody(arrowStream));
    return answers.read(
        Operation.INSERT_INTO_TABLE, request.id(), r, InsertIntoTableResponse.class);
  }

  MergeInsertIntoTableResponse mergeInsertIntoTable(
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
    RestResponse r = calls.call(op, request, q, arrowBody(arrowStream));
    return answers.read(op, request.id(), r, MergeInsertIntoTableResponse.class);
  }

  private static RestRequest.Body arrowBody(byte[] arrowStream) {
    if (arrowStream == null || arrowStream.length == 0) {
      throw new ClientConfigException(
          "The Arrow IPC stream body is empty; send at least a schema message");
    }
    return new RestRequest.Body(arrowStream, RestRequest.Body.ARROW_STREAM);
  }

  byte[] queryTableIpc(QueryTableRequest request) {
    return calls.call(Operation.QUERY_TABLE, request, Map.of(), calls.jsonBody(request)).body();
  }

  /** A stream-format answer is accepted as well as the file format the spec names. */
  ArrowBatches queryTable(QueryTableRequest request, BufferAllocator allocator) {
    RestResponse r =
        calls.call(Operation.QUERY_TABLE, request, Map.of(), calls.jsonBody(request));
    try {
      return ArrowIpc.read(r.body(), allocator);
    } catch (IOException | RuntimeException e) {
      throw RestAnswers.invalidResponse(Operation.QUERY_TABLE, request.id(), r,
          "not an Arrow IPC file or stream: " + e.getClass().getSimpleName());
    }
  }

  /** The spec's answer is a bare integer; {@code {"count": n}} is accepted too. */
  long countTableRows(CountTableRowsRequest request) {
    Operation op = Operation.COUNT_TABLE_ROWS;
    RestResponse r = calls.call(op, request, Map.of(), calls.jsonBody(request));
    JsonNode node = answers.readTree(op, request.id(), r);
    JsonNode n = node.isObject() ? node.get("count") : node;
    if (n == null || !n.canConvertToLong() || !(n.isIntegralNumber() || n.isTextual())) {
      if (n != null && n.isTextual()) {
        try {
          return Long.parseLong(n.asText().trim());
        } catch (NumberFormatException e) {
          throw RestAnswers.invalidResponse(op, request.id(), r, "expected an integer row count,"
              + " got text that is not one");
        }
      }
      throw RestAnswers.invalidResponse(op, request.id(), r,
          "expected an integer row count, got " + (n == null ? node : n).getNodeType());
    }
    return n.asLong();
  }

  /** ExplainTableQueryPlan and AnalyzeTableQueryPlan: their answer is text. */
  String textAnswer(Operation op, LanceRequest request, String field) {
    RestResponse r = calls.call(op, request, Map.of(), calls.jsonBody(request));
    return answers.text(r, field);
  }
}
