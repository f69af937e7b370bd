package io.lancerest.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lancerest.client.error.InvalidInputException;
import io.lancerest.client.error.LanceRestException;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DescribeTableResponse;
import io.lancerest.client.model.TableExistsRequest;
import io.lancerest.client.model.UpdateTableSchemaMetadataRequest;
import io.lancerest.client.model.UpdateTableSchemaMetadataResponse;
import io.lancerest.client.spec.Operation;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The table metadata calls with more to them than one JSON request and answer: DescribeTable's
 * query flags, TableExists's fallback to DescribeTable, and UpdateTableSchemaMetadata's bare maps.
 */
final class TableMetadataCalls {
  private final RestCalls calls;
  private final RestAnswers answers;

  TableMetadataCalls(RestCalls calls) {
    this.calls = calls;
    this.answers = calls.answers();
  }

  DescribeTableResponse describeTable(DescribeTableRequest request) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("with_table_uri", request.getWithTableUri());
    q.put("load_detailed_metadata", request.getLoadDetailedMetadata());
    q.put("check_declared", request.getCheckDeclared());
    return calls.json(Operation.DESCRIBE_TABLE, request, q, DescribeTableResponse.class);
  }

  void tableExists(TableExistsRequest request) {
    calls.call(Operation.TABLE_EXISTS, request, Map.of(), calls.jsonBody(request));
  }

  /** False only for a genuine not-found; every other failure propagates. */
  boolean tableExists(List<String> id) {
    try {
      tableExists(new TableExistsRequest().id(id));
      return true;
    } catch (NotFoundException e) {
      return false;
    } catch (InvalidInputException rejected) {
      // The upstream dir server answers 400 ("Multi-level table IDs are only supported when
      // manifest mode is enabled") to TableExists for a nested table it does not know, while
      // DescribeTable answers a proper 404. Ask again that way rather than guess.
      try {
        describeTable(new DescribeTableRequest().id(id));
        return true;
      } catch (NotFoundException e) {
        return false;
      } catch (LanceRestException other) {
        rejected.addSuppressed(other);
        throw rejected;
      }
    }
  }

  /** The request's map is the whole body; the answer's map becomes the record's metadata. */
  UpdateTableSchemaMetadataResponse updateTableSchemaMetadata(
      UpdateTableSchemaMetadataRequest request) {
    Operation op = Operation.UPDATE_TABLE_SCHEMA_METADATA;
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("branch", request.getBranch());
    Map<String, String> metadata = request.getMetadata() == null ? Map.of() : request.getMetadata();
    RestResponse r = calls.call(op, request, q, calls.jsonBody(metadata));
    JsonNode node = answers.readTree(op, request.getId(), r);
    ObjectNode wrapped = answers.newObject();
    if (node.isObject() && node.has("metadata") && node.get("metadata").isObject()) {
      // A server that follows the schema rather than the route answers {metadata, ...}.
      wrapped.setAll((ObjectNode) node);
    } else if (node.isObject()) {
      wrapped.set("metadata", node);
    }
    return answers.fromTree(op, request.getId(), r, wrapped,
        UpdateTableSchemaMetadataResponse.class);
  }
}
