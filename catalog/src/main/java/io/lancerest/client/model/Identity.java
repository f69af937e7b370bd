package io.lancerest.client.model;

import io.lancerest.client.auth.Secret;

/**
 * Per-call identity of the spec. Over REST it is sent as headers ({@code api_key} as
 * {@code x-api-key}, {@code auth_token} as {@code Authorization: Bearer}), never in the body.
 */
public record Identity(Secret apiKey, Secret authToken) {
  public static Identity apiKey(String key) {
    return new Identity(Secret.of(key), null);
  }

  public static Identity bearer(String token) {
    return new Identity(null, Secret.of(token));
  }
}
