package io.lancerest.client;

/** The project version, for the User-Agent. */
public final class Version {
  public static final String VERSION = read();

  private Version() {}

  private static String read() {
    String v = Version.class.getPackage().getImplementationVersion();
    return v != null ? v : "0.1.0-SNAPSHOT";
  }
}
