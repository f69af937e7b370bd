package io.lancerest.client.auth;

import java.io.Closeable;
import java.util.Map;

/** Supplies the authentication headers of each request, and reacts to a 401. */
public interface AuthManager extends Closeable {
  String API_KEY_HEADER = "x-api-key";

  /** Headers to add to the next request (may be empty). */
  Map<String, String> headers();

  /**
   * Called after a 401. Returns true when new credentials are available, so that the request is
   * worth sending once more.
   *
   * @param rejectedAuthorization the Authorization header the server refused, so that many
   *     requests refused together share one refresh
   */
  default boolean refreshAfterUnauthorized(String rejectedAuthorization) {
    return false;
  }

  @Override
  default void close() {}

  /** No authentication headers. */
  static AuthManager none() {
    return Map::of;
  }

  /** A fixed bearer token and/or API key. */
  static AuthManager fixed(Secret bearer, Secret apiKey) {
    java.util.Map<String, String> h = new java.util.LinkedHashMap<>();
    if (bearer != null) {
      h.put("Authorization", "Bearer " + bearer.reveal());
    }
    if (apiKey != null) {
      h.put(API_KEY_HEADER, apiKey.reveal());
    }
    Map<String, String> frozen = Map.copyOf(h);
    return new AuthManager() {
      @Override
      public Map<String, String> headers() {
        return frozen;
      }

      @Override
      public String toString() {
        return "FixedAuth{bearer=" + (bearer != null) + ", apiKey=" + (apiKey != null) + "}";
      }
    };
  }
}
