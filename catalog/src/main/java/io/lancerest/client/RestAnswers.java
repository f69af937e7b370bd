package io.lancerest.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lancerest.client.error.ErrorDetails;
import io.lancerest.client.error.InvalidResponseException;
import io.lancerest.client.error.LanceRestException;
import io.lancerest.client.spec.Operation;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Decodes a successful answer into the spec's response model, with the response headers as its
 * {@code context}, or says why the answer is not one without quoting its body.
 */
final class RestAnswers {
  static final String CONTEXT_HEADER = "header.";

  private final ObjectMapper json;

  RestAnswers(ObjectMapper json) {
    this.json = json;
  }

  /** Reads a JSON response, with the response headers as {@code context} entries. */
  <T> T read(Operation op, List<String> id, RestResponse r, Class<T> type) {
    if (r.body().length > 0) {
      // Fast path: decode the bytes directly. Any failure (or a JSON null) goes through the
      // tree path below, which then decides the answer or the error.
      T direct = null;
      try {
        direct = json.readValue(r.body(), type);
      } catch (IOException | RuntimeException retriedBelow) {
        // reported by the tree path
      }
      if (direct != null) {
        return ModelParts.withContext(direct, contextOf(r));
      }
    }
    JsonNode node = readTree(op, id, r);
    if (!node.isObject()) {
      throw invalidResponse(op, id, r, "expected a JSON object, got " + node.getNodeType());
    }
    return fromTree(op, id, r, (ObjectNode) node, type);
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

  /** The response model from a JSON object, which gains the answer's {@code context}. */
  <T> T fromTree(Operation op, List<String> id, RestResponse r, ObjectNode node, Class<T> type) {
    try {
      return ModelParts.withContext(json.treeToValue(node, type), contextOf(r));
    } catch (IOException | IllegalArgumentException e) {
      throw invalidResponse(op, id, r, e);
    }
  }

  ObjectNode newObject() {
    return json.createObjectNode();
  }

  /**
   * An answer the spec gives as a JSON string. Also accepted: an object holding the text under
   * {@code field}, and plain text (what several servers actually send).
   */
  String text(RestResponse r, String field) {
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
}
