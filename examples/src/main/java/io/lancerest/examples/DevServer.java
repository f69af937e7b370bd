package io.lancerest.examples;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.lance.namespace.RestAdapter;

/**
 * Runs lance-core's upstream REST namespace server ({@code RestAdapter("dir")}) over a local
 * folder until interrupted, so that spark-shell, spark-sql, spark-submit, a notebook or
 * {@link SqlRunner} can point a catalog at it. We write no server of our own: this only wraps the
 * upstream one.
 *
 * <pre>
 *   --root DIR    folder of Lance tables (default ./warehouse; created if missing), relative to
 *                 the directory the command was run in ({@link CallerPaths})
 *   --host HOST   address to bind (default 127.0.0.1)
 *   --port PORT   port (default 2333; 0 picks a free one)
 * </pre>
 *
 * <p>Exit codes: 2 for a bad command line, 1 when the server cannot start (for instance its port
 * is taken), each with one line on standard error.
 */
public final class DevServer {
  static final String USAGE = """
      Usage: DevServer [--root DIR] [--host HOST] [--port PORT]
        --root DIR   folder of Lance tables (default ./warehouse, relative to where you ran the command)
        --host HOST  address to bind (default 127.0.0.1)
        --port PORT  port to listen on (default 2333; 0 = any free port)""";

  private DevServer() {}

  /** The command line. */
  record Options(String root, String host, int port, boolean help) {
    static Options parse(String[] args) {
      String root = "warehouse";
      String host = "127.0.0.1";
      int port = 2333;
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        if (a.equals("--help") || a.equals("-h")) {
          return new Options(root, host, port, true);
        }
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("missing value for " + a);
        }
        String v = args[++i];
        switch (a) {
          case "--root" -> root = v;
          case "--host" -> host = v;
          case "--port" -> port = port(v);
          default -> throw new IllegalArgumentException("unknown option " + a);
        }
      }
      return new Options(root, host, port, false);
    }

    private static int port(String v) {
      try {
        int p = Integer.parseInt(v);
        if (p >= 0 && p <= 65535) {
          return p;
        }
      } catch (NumberFormatException e) {
        // below
      }
      throw new IllegalArgumentException("--port must be a number from 0 to 65535, got '" + v
          + "'");
    }
  }

  /** Why the server did not start, in one line that says what to do. */
  static final class StartException extends Exception {
    StartException(String message) {
      super(message);
    }
  }

  /** A started server, its folder and its uri. */
  record Running(RestAdapter server, Path root, String uri) implements AutoCloseable {
    @Override
    public void close() {
      server.close();
    }
  }

  public static void main(String[] args) throws InterruptedException {
    Options options = CommandLines.parseOrExit("DevServer", USAGE, () -> Options.parse(args),
        Options::help);
    if (options == null) {
      return;
    }
    Running running;
    try {
      running = start(options, CallerPaths.callerDir());
    } catch (StartException e) {
      System.err.println("DevServer: " + e.getMessage());
      System.exit(1);
      return;
    }
    System.out.println("Lance REST namespace server (upstream RestAdapter, dir backend)");
    System.out.println("  root: " + running.root());
    System.out.println("  uri:  " + running.uri());
    System.out.println();
    System.out.println("Point Spark at it with:");
    System.out.println("  --conf spark.sql.catalog.lance=io.lancerest.spark.catalog.LanceRestCatalog");
    System.out.println("  --conf spark.sql.catalog.lance.uri=" + running.uri());
    System.out.println("or run SQL against it from another shell (in the repository root):");
    System.out.println("  mvn -B -Pquickstart -DskipTests -pl examples -am verify "
        + "-Dquickstart.main=io.lancerest.examples.SqlRunner -Dquickstart.args=\"--uri "
        + running.uri() + "\"");
    System.out.println("Press Ctrl-C to stop.");
    CountDownLatch stop = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      running.close();
      stop.countDown();
    }, "dev-server-shutdown"));
    stop.await();
  }

  /**
   * Creates the folder ({@code --root}, relative paths taken from {@code callerDir}) and starts
   * the server on it.
   */
  static Running start(Options options, Path callerDir) throws StartException {
    // lance-core reports a taken port with a native log line and an exception; check first so
    // that the usual case gets only the one line below (and no folder is left behind).
    if (options.port() != 0 && portTaken(options.host(), options.port())) {
      throw portInUse(options);
    }
    Path root = CallerPaths.resolve(options.root(), callerDir);
    try {
      Files.createDirectories(root);
    } catch (IOException e) {
      throw new StartException("cannot create the folder " + root + " (--root): " + e);
    }
    RestAdapter server = new RestAdapter("dir", Map.of("root", root.toString()), options.host(),
        options.port());
    try {
      server.start();
    } catch (Exception e) {
      server.close();
      if (String.valueOf(e.getMessage()).contains("Address already in use")) {
        throw portInUse(options);
      }
      throw new StartException("cannot start the server on " + options.host() + ":"
          + options.port() + ": " + e.getMessage());
    }
    return new Running(server, root, "http://" + options.host() + ":" + server.getPort());
  }

  private static boolean portTaken(String host, int port) {
    try (ServerSocket probe = new ServerSocket()) {
      probe.setReuseAddress(true);
      probe.bind(new InetSocketAddress(host, port));
      return false;
    } catch (BindException e) {
      return true;
    } catch (IOException | RuntimeException e) {
      return false; // e.g. an unknown host: the server's own start reports it
    }
  }

  private static StartException portInUse(Options options) {
    return new StartException("port " + options.port() + " on " + options.host()
        + " is already in use (is another DevServer running?): stop that process, or start "
        + "this one with --port <another port> (--port 0 picks a free one)");
  }
}
