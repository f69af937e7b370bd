package io.lancerest.client.auth;

import io.lancerest.client.error.ClientConfigException;
import java.util.Map;
import java.util.Objects;

/**
 * A secret value (token, API key, client secret). {@link #toString()} never shows it; only
 * {@link #reveal()} does, at the single place where it goes on the wire.
 */
public final class Secret {
  private static final String MASK = "****";
  private final String value;

  private Secret(String value) {
    this.value = Objects.requireNonNull(value);
  }

  public static Secret of(String value) {
    return value == null ? null : new Secret(value);
  }

  /**
   * Reads a configured secret. {@code env:VAR} is read from the environment variable VAR, and
   * {@code file:/path} from that file of the driver (its content, without surrounding white
   * space: a mounted Kubernetes secret, for example), so that the secret itself need not appear
   * in the Spark configuration, which Spark hands to every task.
   *
   * @param option the option name, for the error message
   */
  public static Secret resolve(String option, String configured, Map<String, String> env) {
    if (configured == null) {
      return null;
    }
    if (configured.startsWith("env:")) {
      String var = configured.substring(4);
      String v = env.get(var);
      if (v == null || v.isEmpty()) {
        throw new ClientConfigException(
            "Option '" + option + "' refers to environment variable " + var
                + ", which is not set; export it or give the value directly");
      }
      return new Secret(v);
    }
    if (configured.startsWith("file:")) {
      java.nio.file.Path path = java.nio.file.Path.of(configured.substring(5));
      String v;
      try {
        v = java.nio.file.Files.readString(path).strip();
      } catch (java.io.IOException | RuntimeException e) {
        throw new ClientConfigException("Option '" + option + "' refers to file " + path
            + ", which cannot be read (" + e.getClass().getSimpleName() + "); check the path "
            + "and its permissions, or give the value directly");
      }
      if (v.isEmpty()) {
        throw new ClientConfigException("Option '" + option + "' refers to file " + path
            + ", which is empty");
      }
      return new Secret(v);
    }
    return new Secret(configured);
  }

  public String reveal() {
    return value;
  }

  @Override
  public String toString() {
    return MASK;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Secret s && s.value.equals(value);
  }

  @Override
  public int hashCode() {
    return value.hashCode();
  }
}
