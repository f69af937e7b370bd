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
    try (AutoCloseable server = BundleSmokeApp.startServer(properties, port)) {
      System.out.println("SERVING on " + port);
      System.out.flush();
      while (System.in.read() >= 0) {
        // until the test closes our input (or kills us)
      }
    }
  }
}
