package io.lancerest.client;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * A successful (2xx) answer.
 *
 * @param headers response headers, names in lower case
 */
public record RestResponse(int status, Map<String, List<String>> headers, byte[] body) {

  public String bodyAsString() {
    return body == null ? "" : new String(body, StandardCharsets.UTF_8);
  }

  /** First value of a header (case-insensitive name), or null. */
  public String header(String name) {
    List<String> values = headers.get(name.toLowerCase(java.util.Locale.ROOT));
    return values == null || values.isEmpty() ? null : values.get(0);
  }
}
