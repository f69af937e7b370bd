package io.lancerest.client;

import io.lancerest.client.spec.Operation;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One call to the server, as a value: the operation (which fixes method, route and retry class),
 * the identifier, extra path parameters, query parameters, per-call headers and the body.
 *
 * @param id the identifier that fills {@code {id}}, or null for routes without one
 * @param pathParams other path parameters, e.g. {@code index_name}
 * @param body the body, or null for a call without one
 */
public record RestRequest(
    Operation operation,
    List<String> id,
    Map<String, String> pathParams,
    Map<String, String> query,
    Map<String, String> headers,
    Body body) {

  /** A request body: bytes with their media type. */
  public record Body(byte[] bytes, String mediaType) {
    public static final String JSON = "application/json";
    public static final String ARROW_STREAM = "application/vnd.apache.arrow.stream";
  }

  public static Builder builder(Operation operation) {
    return new Builder(operation);
  }

  /** Builder for {@link RestRequest}. */
  public static final class Builder {
    private final Operation operation;
    private List<String> id;
    private final Map<String, String> pathParams = new LinkedHashMap<>();
    private final Map<String, String> query = new LinkedHashMap<>();
    private final Map<String, String> headers = new LinkedHashMap<>();
    private Body body;

    private Builder(Operation operation) {
      this.operation = operation;
    }

    public Builder id(List<String> value) {
      this.id = value == null ? null : List.copyOf(value);
      return this;
    }

    public Builder pathParam(String name, String value) {
      pathParams.put(name, value);
      return this;
    }

    /** Adds a query parameter; null values are left out. */
    public Builder query(String name, Object value) {
      if (value != null) {
        query.put(name, String.valueOf(value));
      }
      return this;
    }

    public Builder headers(Map<String, String> values) {
      if (values != null) {
        headers.putAll(values);
      }
      return this;
    }

    public Builder body(byte[] bytes, String mediaType) {
      this.body = new Body(bytes, mediaType);
      return this;
    }

    public RestRequest build() {
      return new RestRequest(
          operation, id, Map.copyOf(pathParams), Map.copyOf(query), Map.copyOf(headers), body);
    }
  }
}
