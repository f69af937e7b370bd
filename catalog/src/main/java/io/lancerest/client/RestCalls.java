package io.lancerest.client;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.lancerest.client.error.ClientConfigException;
import io.lancerest.client.model.Identity;
import io.lancerest.client.spec.Operation;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Sends one operation of the spec: builds its HTTP request (the path id, headers from the call's
 * identity and context, query, body) and reads the answer through {@link RestAnswers}.
 */
final class RestCalls {
  private static final String CONTEXT_HEADERS = "headers.";

  private final HttpTransport transport;
  private final ObjectMapper json;
  private final RestAnswers answers;

  RestCalls(HttpTransport transport, ObjectMapper json) {
    this.transport = transport;
    this.json = json;
    this.answers = new RestAnswers(json);
  }

  RestAnswers answers() {
    return answers;
  }

  /** Sends a JSON-bodied request without query parameters and reads a JSON response. */
  <T> T json(Operation op, Object request, Class<T> type) {
    return json(op, request, Map.of(), type);
  }

  /** Sends a JSON-bodied request and reads a JSON response of type {@code type}. */
  <T> T json(Operation op, Object request, Map<String, Object> query, Class<T> type) {
    return send(op, request, query, Map.of(), jsonBody(request), type);
  }

  /** Sends a request without a body (GET lists, and POST routes whose spec has no body). */
  <T> T noBody(Operation op, Object request, Map<String, Object> query, Class<T> type) {
    return send(op, request, query, Map.of(), null, type);
  }

  /** Sends {@code body} (null: none) and reads a JSON response of type {@code type}. */
  <T> T send(Operation op, Object request, Map<String, Object> query,
      Map<String, String> pathParams, RestRequest.Body body, Class<T> type) {
    RestResponse r = call(op, request, query, pathParams, body);
    return answers.read(op, ModelParts.id(request), r, type);
  }

  RestResponse call(
      Operation op, Object request, Map<String, Object> query, RestRequest.Body body) {
    return call(op, request, query, Map.of(), body);
  }

  RestResponse call(Operation op, Object request, Map<String, Object> query,
      Map<String, String> pathParams, RestRequest.Body body) {
    RestRequest.Builder b = RestRequest.builder(op)
        .id(op.pathTemplate().contains("{id}") ? safeId(ModelParts.id(request)) : null)
        .headers(headersOf(ModelParts.identity(request), ModelParts.context(request)));
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
    String header = RestAnswers.CONTEXT_HEADER;
    Map<String, String> h = new LinkedHashMap<>();
    if (context != null) {
      context.forEach((k, v) -> {
        if (k.startsWith(header) && k.length() > header.length()) {
          h.put(k.substring(header.length()), v);
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

  /** The query of a paged listing whose route takes no body. */
  static Map<String, Object> pageQuery(String pageToken, Number limit) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("page_token", pageToken);
    q.put("limit", limit);
    return q;
  }

  /** The path parameter of the index routes. */
  static Map<String, String> indexName(Operation op, String name) {
    if (name == null || name.isEmpty()) {
      throw new ClientConfigException(op.specName() + " needs the index name ('indexName')");
    }
    return Map.of("index_name", name);
  }

  /** A string map as JSON text, for the query parameters that carry one; null when empty. */
  String jsonQuery(Map<String, String> map) {
    if (map == null || map.isEmpty()) {
      return null;
    }
    try {
      return json.writeValueAsString(map);
    } catch (IOException e) {
      throw new IllegalArgumentException("Map could not be written as JSON: " + e, e);
    }
  }
}
