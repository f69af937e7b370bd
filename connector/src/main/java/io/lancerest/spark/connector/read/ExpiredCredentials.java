package io.lancerest.spark.connector.read;

/**
 * An object store's refusal of expired storage credentials, told to the user with the table it
 * concerns and how executors renew credentials, which lance-core's own message does not say.
 */
public final class ExpiredCredentials {
  private ExpiredCredentials() {}

  /** Whether {@code e} or one of its causes is the object store refusing expired credentials. */
  public static boolean in(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      String m = String.valueOf(t.getMessage());
      if (m.contains("ExpiredToken") || m.contains("token has expired")
          || m.contains("RequestExpired")) {
        return true;
      }
    }
    return false;
  }

  /**
   * The error for {@code e}: {@code what} failed ("Reading table ns.t"), the credentials it had
   * were valid until {@code expireAt} (epoch millis, or null when unknown).
   */
  public static IllegalStateException explain(String what, Long expireAt, Exception e) {
    return new IllegalStateException(what + " failed: the object store "
        + "refused its storage credentials as expired" + (expireAt == null ? ""
        : " (the server vended them valid until " + java.time.Instant.ofEpochMilli(expireAt)
            + ")") + ", and they were not renewed. Executors renew vended "
        + "credentials through the table's namespace: with a server that requires a token, "
        + "through the catalog's credential relay (credential-relay.enabled, true by default; "
        + "docs/configuration.md). The cause: " + e.getMessage(), e);
  }
}
