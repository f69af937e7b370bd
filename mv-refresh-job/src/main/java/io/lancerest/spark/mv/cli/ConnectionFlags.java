package io.lancerest.spark.mv.cli;

import io.lancerest.client.RestClientConfig;
import java.util.Map;

/**
 * The command-line flags that say how to reach a Lance REST namespace and authenticate to it,
 * shared by {@link io.lancerest.spark.mv.RefreshJob} and the view service: each becomes a catalog option
 * ({@code token}, {@code header.X}, ...), and secret values may be {@code env:VAR}.
 */
public final class ConnectionFlags {
  /** The flags' lines of a {@code --help} text. */
  public static final String USAGE = """
        --delimiter D                  identifier delimiter of the server (default $)
        --header K=V                   extra HTTP header; repeatable
        --token T                      bearer token (or env:VAR)
        --api-key K                    x-api-key header (or env:VAR)
        --oauth2-credential ID:SECRET  OAuth2 client credentials (or env:VAR); excludes --token
        --oauth2-token-uri URL         token endpoint (default <uri>/oauth/token)
        --oauth2-scope S               requested scope
      """;

  private ConnectionFlags() {}

  /**
   * Records {@code --name value} in {@code catalog} if it is a connection flag.
   *
   * @return whether it was one
   * @throws IllegalArgumentException for a flag given twice or a malformed value
   */
  public static boolean apply(String name, String value, Map<String, String> catalog) {
    switch (name) {
      case "delimiter" -> once(catalog, RestClientConfig.DELIMITER, name, value);
      case "header" -> {
        int kv = value.indexOf('=');
        if (kv <= 0) {
          throw new IllegalArgumentException("--header must be NAME=VALUE, got '" + value + "'");
        }
        catalog.put(RestClientConfig.HEADER_PREFIX + value.substring(0, kv),
            value.substring(kv + 1));
      }
      case "token" -> once(catalog, RestClientConfig.TOKEN, name, value);
      case "api-key" -> once(catalog, RestClientConfig.API_KEY, name, value);
      case "oauth2-credential" -> once(catalog, RestClientConfig.OAUTH2_CREDENTIAL, name, value);
      case "oauth2-token-uri" -> once(catalog, RestClientConfig.OAUTH2_TOKEN_URI, name, value);
      case "oauth2-scope" -> once(catalog, RestClientConfig.OAUTH2_SCOPE, name, value);
      default -> {
        return false;
      }
    }
    return true;
  }

  /** Refuses combinations of flags that contradict each other. */
  public static void checkCombination(Map<String, String> catalog) {
    if (catalog.containsKey(RestClientConfig.TOKEN)
        && catalog.containsKey(RestClientConfig.OAUTH2_CREDENTIAL)) {
      throw new IllegalArgumentException("--token and --oauth2-credential both set the bearer "
          + "token; give one");
    }
    if (!catalog.containsKey(RestClientConfig.OAUTH2_CREDENTIAL)
        && (catalog.containsKey(RestClientConfig.OAUTH2_TOKEN_URI)
            || catalog.containsKey(RestClientConfig.OAUTH2_SCOPE))) {
      throw new IllegalArgumentException("--oauth2-token-uri and --oauth2-scope need "
          + "--oauth2-credential");
    }
  }

  /** Whether a catalog option holds a secret (its value is never printed). */
  public static boolean isSecret(String option) {
    return option.equals(RestClientConfig.TOKEN) || option.equals(RestClientConfig.API_KEY)
        || option.equals(RestClientConfig.OAUTH2_CREDENTIAL)
        || option.startsWith(RestClientConfig.HEADER_PREFIX);
  }

  private static void once(Map<String, String> m, String key, String flag, String value) {
    if (m.putIfAbsent(key, value) != null) {
      throw new IllegalArgumentException("--" + flag + " is given twice");
    }
  }
}
