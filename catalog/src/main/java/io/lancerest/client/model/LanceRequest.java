package io.lancerest.client.model;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;
import java.util.Map;

/**
 * What every request model has. {@code identity} and {@code context} travel as HTTP headers
 * over REST, so they are never written into the JSON body.
 */
@JsonIgnoreProperties(value = {"identity", "context"}, allowGetters = false)
public interface LanceRequest {
  /** The identifier of the call (the {@code {id}} of the route), or null. */
  List<String> id();

  /** Per-call identity, or null. */
  default Identity identity() {
    return null;
  }

  /** Per-call context: {@code header.X} entries become HTTP header X. May be null. */
  default Map<String, String> context() {
    return null;
  }
}
