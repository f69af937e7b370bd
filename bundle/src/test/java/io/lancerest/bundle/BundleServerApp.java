package io.lancerest.bundle;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * lance-core's dir server in a JVM of its own (class path: the lance jars and this test jar), for
 * {@link BundleClusterTest}: it outlives the Spark applications that use it. Prints
 * {@code SERVING} once it listens, and stops when its standard input ends.
 *
 * <p>Arguments: {@code <port> <key>=<value>...}, the server's properties ({@code root},
 * {@code storage.*}).
 */
public final class BundleServerApp {
  private BundleServerApp() {}

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    Map<String, String> properties = new LinkedHashMap<>();
    for (int i = 1; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      properties.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    try (AutoCloseable server = startServer(properties, port)) {
      System.out.println("SERVING on " + port);
      System.out.flush();
      while (System.in.read() >= 0) {
        // until the test closes our input (or kills us)
      }
    }
  }

  /**
   * Starts lance-core's dir server on {@code port}. lance-core is on the application class path
   * (the lance jars), not in the bundle; it is reached by reflection so that this test module
   * needs no compile dependency on it, which would disturb the Spark-only class path resolved
   * for the Spark JVMs.
   */
  static AutoCloseable startServer(Map<String, String> properties, int port) throws Exception {
    Class<?> adapterClass = Class.forName("org.lance.namespace.RestAdapter");
    AutoCloseable server = (AutoCloseable) adapterClass
        .getConstructor(String.class, Map.class, String.class, Integer.class)
        .newInstance("dir", properties, "127.0.0.1", port);
    adapterClass.getMethod("start").invoke(server);
    return server;
  }
}
