package io.lancerest.examples;

import io.lancerest.testing.ChildJvm;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.lance.namespace.RestAdapter;

/**
 * How the client tests start Spark the way a user does: {@code SparkSubmit} in client mode, as
 * {@code bin/spark-shell} and {@code sbin/start-connect-server.sh} run it, with
 * {@code --properties-file} the configuration the docs give ({@code
 * examples/conf/spark-defaults.conf}), in a JVM of its own.
 *
 * <p>Two things differ from a Spark distribution, and only where this build must: the catalog's
 * {@code uri} points at the test's server, and the three jar lines are left out, because the
 * child's class path (the test class path) already holds the bundle's modules and the lance jars.
 * That class path gets Spark's own netty: the build's Arrow 18 (a lance-core dependency) resolves
 * netty-buffer and netty-common 4.1.119 next to Spark's other netty modules at 4.1.96, and with
 * that mix the Connect server's gRPC streams were cut ({@code CANCELLED: RST_STREAM closed
 * stream}, the server logging {@code Encountered end-of-stream mid-frame}) on about one call in
 * four that carried a local relation, with the server's own gRPC client too; with 4.1.96
 * throughout, as a distribution has it, on none of 40.
 */
final class SparkClients {
  private static final Pattern NETTY =
      Pattern.compile("(netty-(?:buffer|common))-[0-9][^/]*\\.jar");

  private SparkClients() {}

  /** lance-core's upstream REST server on 127.0.0.1, a free port, serving {@code dir/warehouse}. */
  static RestAdapter restServer(Path dir) throws IOException {
    Path warehouse = Files.createDirectories(dir.resolve("warehouse"));
    RestAdapter server = new RestAdapter("dir", Map.of("root", warehouse.toString()), "127.0.0.1",
        0);
    server.start();
    return server;
  }

  /**
   * Writes {@code examples/conf/spark-defaults.conf} into {@code dir} with the catalog's uri
   * pointed at {@code server} and the jar lines left out; every other line is the file's.
   */
  static Path confFile(Path dir, RestAdapter server) throws IOException {
    String uri = "http://127.0.0.1:" + server.getPort();
    StringBuilder out = new StringBuilder();
    for (Map.Entry<String, String> e : ExampleSpark.defaults(ExampleSpark.confFile()).entrySet()) {
      if (!ExampleSpark.CLASSPATH_KEYS.contains(e.getKey())) {
        String value = e.getKey().equals("spark.sql.catalog.lance.uri") ? uri : e.getValue();
        out.append(e.getKey()).append(' ').append(value).append('\n');
      }
    }
    Path file = dir.resolve("spark-defaults.conf");
    Files.writeString(file, out);
    return file;
  }

  /** The test class path, with netty-buffer and netty-common those of Spark's distribution. */
  static String sparkClassPath() {
    Path netty = Path.of(required("lancerest.spark.netty.dir"));
    List<String> out = new ArrayList<>();
    int replaced = 0;
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Matcher m = NETTY.matcher(Path.of(entry).getFileName().toString());
      if (m.matches()) {
        try (var jars = Files.list(netty)) {
          entry = jars.filter(j -> j.getFileName().toString().startsWith(m.group(1) + "-"))
              .findFirst().orElseThrow(() -> new AssertionError("no " + m.group(1) + " in "
                  + netty)).toString();
        } catch (IOException e) {
          throw new AssertionError("cannot list " + netty, e);
        }
        replaced++;
      }
      out.add(entry);
    }
    if (replaced != 2) {
      throw new AssertionError("expected netty-buffer and netty-common on the test class path, "
          + "replaced " + replaced + " jars");
    }
    return String.join(File.pathSeparator, out);
  }

  /**
   * Starts {@code SparkSubmit --class main --name name --master local[2] --properties-file conf
   * ... resource} in a JVM of its own (Spark's Java 17 flags are ChildJvm's), with the Spark UI
   * off (the only setting added to the file's).
   */
  static ChildJvm submit(String what, Path conf, String main, String name, List<String> jvmArgs,
      List<String> conf2, String resource) {
    List<String> args = new ArrayList<>(List.of("--class", main, "--name", name,
        "--master", "local[2]", "--properties-file", conf.toString(),
        "--conf", "spark.ui.enabled=false"));
    for (String c : conf2) {
      args.add("--conf");
      args.add(c);
    }
    args.add(resource);
    return ChildJvm.start(what, "org.apache.spark.deploy.SparkSubmit", sparkClassPath(),
        jvmArgs, args.toArray(String[]::new));
  }

  /** status, kind, rows_inserted and rows_deleted of a CREATE or REFRESH row, joined by |. */
  static String outcome(Map<String, String> row) {
    return String.join("|", row.get("status"), row.get("kind"), row.get("rows_inserted"),
        row.get("rows_deleted"));
  }

  static String required(String property) {
    String v = System.getProperty(property);
    if (v == null) {
      throw new AssertionError("system property " + property + " is not set: run this test "
          + "with Maven (examples/pom.xml sets it)");
    }
    return v;
  }
}
