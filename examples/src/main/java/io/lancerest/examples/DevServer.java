package io.lancerest.examples;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.lance.namespace.RestAdapter;

/**
 * Runs lance-core's upstream REST namespace server ({@code RestAdapter("dir")}) over a local
 * folder until interrupted, so that spark-shell, spark-sql, spark-submit or a notebook can point a
 * catalog at it. We write no server of our own: this only wraps the upstream one.
 *
 * <pre>
 *   --root DIR    folder of Lance tables (default ./warehouse; created if missing)
 *   --host HOST   address to bind (default 127.0.0.1)
 *   --port PORT   port (default 2333; 0 picks a free one)
 * </pre>
 */
public final class DevServer {
  private DevServer() {}

  public static void main(String[] args) throws Exception {
    String root = "warehouse";
    String host = "127.0.0.1";
    int port = 2333;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("--help") || a.equals("-h")) {
        System.out.println(usage());
        return;
      }
      if (i + 1 >= args.length) {
        fail("missing value for " + a);
      }
      String v = args[++i];
      switch (a) {
        case "--root" -> root = v;
        case "--host" -> host = v;
        case "--port" -> {
          try {
            port = Integer.parseInt(v);
          } catch (NumberFormatException e) {
            fail("--port must be a number, got '" + v + "'");
          }
        }
        default -> fail("unknown option " + a);
      }
    }
    Path dir = Path.of(root).toAbsolutePath();
    Files.createDirectories(dir);
    RestAdapter server = new RestAdapter("dir", Map.of("root", dir.toString()), host, port);
    server.start();
    String uri = "http://" + host + ":" + server.getPort();
    System.out.println("Lance REST namespace server (upstream RestAdapter, dir backend)");
    System.out.println("  root: " + dir);
    System.out.println("  uri:  " + uri);
    System.out.println();
    System.out.println("Point Spark at it with:");
    System.out.println("  --conf spark.sql.catalog.lance=io.lancerest.spark.catalog.LanceRestCatalog");
    System.out.println("  --conf spark.sql.catalog.lance.uri=" + uri);
    System.out.println("Press Ctrl-C to stop.");
    CountDownLatch stop = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.close();
      stop.countDown();
    }, "dev-server-shutdown"));
    stop.await();
  }

  private static String usage() {
    return "Usage: DevServer [--root DIR] [--host HOST] [--port PORT]\n"
        + "  --root DIR   folder of Lance tables (default ./warehouse)\n"
        + "  --host HOST  address to bind (default 127.0.0.1)\n"
        + "  --port PORT  port to listen on (default 2333; 0 = any free port)";
  }

  private static void fail(String message) {
    System.err.println("DevServer: " + message + "\n" + usage());
    System.exit(2);
  }
}
