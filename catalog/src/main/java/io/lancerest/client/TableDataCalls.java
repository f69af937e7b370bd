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
    q.put("mode", request.getMode());
    q.put("properties", calls.jsonQuery(request.getProperties()));
    q.put("storage_options", calls.jsonQuery(request.getStorageOptions()));
    RestResponse r = calls.call(Operation.CREATE_TABLE, request, q, arrowBody(arrowStream));
    return answers.read(Operation.CREATE_TABLE, request.getId(), r, CreateTableResponse.class);
  }

  InsertIntoTableResponse insertIntoTable(InsertIntoTableRequest request, byte[] arrowStream) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("branch", request.getBranch());
    q.put("mode", request.getMode());
    RestResponse r = calls.call(Operation.INSERT_INTO_TABLE, request, q, arrowBody(arrowStream));
    return answers.read(
        Operation.INSERT_INTO_TABLE, request.getId(), r, InsertIntoTableResponse.class);
  }

  MergeInsertIntoTableResponse mergeInsertIntoTable(
      MergeInsertIntoTableRequest request, byte[] arrowStream) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("branch", request.getBranch());
    q.put("on", request.getOn());
    q.put("when_matched_update_all", request.getWhenMatchedUpdateAll());
    q.put("when_matched_update_all_filt", request.getWhenMatchedUpdateAllFilt());
    q.put("when_not_matched_insert_all", request.getWhenNotMatchedInsertAll());
    q.put("when_not_matched_by_source_delete", request.getWhenNotMatchedBySourceDelete());
    q.put("when_not_matched_by_source_delete_filt", request.getWhenNotMatchedBySourceDeleteFilt());
    q.put("timeout", request.getTimeout());
    q.put("use_index", request.getUseIndex());
    Operation op = Operation.MERGE_INSERT_INTO_TABLE;
    RestResponse r = calls.call(op, request, q, arrowBody(arrowStream));
    return answers.read(op, request.getId(), r, MergeInsertIntoTableResponse.class);
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
      throw RestAnswers.invalidResponse(Operation.QUERY_TABLE, request.getId(), r,
          "not an Arrow IPC file or stream: " + e.getClass().getSimpleName());
    }
  }

  /** The spec's answer is a bare integer; {@code {"count": n}} is accepted too. */
  long countTableRows(CountTableRowsRequest request) {
    Operation op = Operation.COUNT_TABLE_ROWS;
    RestResponse r = calls.call(op, request, Map.of(), calls.jsonBody(request));
    JsonNode node = answers.readTree(op, request.getId(), r);
    JsonNode n = node.isObject() ? node.get("count") : node;
    if (n == null || !n.canConvertToLong() || !(n.isIntegralNumber() || n.isTextual())) {
      if (n != null && n.isTextual()) {
        try {
          return Long.parseLong(n.asText().trim());
        } catch (NumberFormatException e) {
          throw RestAnswers.invalidResponse(op, request.getId(), r, "expected an integer row count,"
              + " got text that is not one");
        }
      }
      throw RestAnswers.invalidResponse(op, request.getId(), r,
          "expected an integer row count, got " + (n == null ? node : n).getNodeType());
    }
    return n.asLong();
  }

  /** ExplainTableQueryPlan and AnalyzeTableQueryPlan: their answer is text. */
  String textAnswer(Operation op, Object request, String field) {
    RestResponse r = calls.call(op, request, Map.of(), calls.jsonBody(request));
    return answers.text(r, field);
  }
}
