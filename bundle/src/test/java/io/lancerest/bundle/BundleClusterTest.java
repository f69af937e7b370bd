package io.lancerest.bundle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.testing.S3ProxyFixture;
import io.lancerest.testing.ChildJvm;
import io.lancerest.testing.StandaloneCluster;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * docs/packaging.md on a real cluster and an object store: a Spark standalone cluster whose
 * SPARK_HOME holds only Spark's jars, lance-core's dir server on an {@code s3://} root
 * (s3proxy), and two {@code spark-submit}s in the documented form (the lance jars on the driver
 * and executor class paths, the bundle in {@code --jars} or as the main jar):
 * <ol>
 *   <li>an application that uses the catalog and creates, refreshes and feeds a query view;
 *   <li>the refresh job ({@code --class io.lancerest.spark.mv.RefreshJob}, the bundle as its
 *       jar), with its work in executor tasks ({@code localRefreshMaxRows=0}).
 * </ol>
 * The executors fetch the bundle from the driver; nothing else of this project is on the
 * cluster. The application also reports where its classes were loaded from: the catalog and the
 * relocated OkHttp from the bundle, Arrow 18 and lance-spark from the lance jars, Spark from
 * Spark's jars, and no unrelocated OkHttp.
 */
@Tag("slow")
class BundleClusterTest {
  private static final String CATALOG = BundleOnSparkClasspathTest.CATALOG;
  private static final String JOB_CATALOG = "lance_refresh_job";

  @Test
  void theRefreshJobRunsFromTheBundleOnAClusterAgainstS3() {
    SparkSubmitLauncher launcher = new SparkSubmitLauncher();
    List<Path> sparkJars = launcher.sparkClasspath().stream().map(Path::of).toList();
    String lanceJars = launcher.lanceJars.resolve("*").toString();
    int port = freePort();
    String uri = "http://127.0.0.1:" + port;
    try (S3ProxyFixture s3 = S3ProxyFixture.start();
        StandaloneCluster cluster = StandaloneCluster.withJars(1, 2, "1g", sparkJars)) {
      List<String> serverArgs = new ArrayList<>(List.of(String.valueOf(port),
          "root=" + s3.uri("bundle")));
      s3.storageOptions("storage.").forEach((k, v) -> serverArgs.add(k + "=" + v));
      try (ChildJvm server = ChildJvm.start("the dir server on " + s3.uri("bundle"),
          BundleServerApp.class.getName(), lanceJars + File.pathSeparator + launcher.appJar,
          List.of("-Xmx512m"), serverArgs.toArray(String[]::new))) {
        server.awaitOutput("SERVING", Duration.ofSeconds(60));

        List<String> common = new ArrayList<>(List.of("--master", cluster.masterUrl()));
        cluster.appConf(2, "1g", 2, "").forEach((k, v) -> {
          if (!k.equals("spark.master")) {
            common.addAll(List.of("--conf", k + "=" + v));
          }
        });
        common.addAll(List.of(
            "--conf", "spark.executor.extraClassPath=" + lanceJars,
            "--conf", "spark.log.level=WARN",
            "--conf", "spark.sql.shuffle.partitions=2",
            "--conf", "spark.sql.extensions=" + BundleOnSparkClasspathTest.EXTENSIONS));

        // 1. An application: the bundle in --jars, the catalog by configuration.
        List<String> app = new ArrayList<>(common);
        app.addAll(catalogConf("lance", uri, s3));
        app.addAll(List.of("--jars", launcher.bundleJar.toString(),
            "--class", BundleSmokeApp.class.getName(), launcher.appJar.toString(),
            "-", String.valueOf(port), "--with-mv", "--then-insert"));
        SparkSubmitLauncher.Result a = launcher.submit("cluster-app", app);
        assertEquals(0, a.exitCode(), a.tail());
        String out = a.output();
        // Where the classes came from on the driver: the bundle, the lance jars, Spark's jars.
        String bundleJar = launcher.bundleJar.getFileName().toString();
        for (String origin : List.of(CATALOG + " " + bundleJar,
            "io.lancerest.shaded.okhttp3.OkHttpClient " + bundleJar,
            "org.apache.arrow.vector.VectorSchemaRoot arrow-vector-18.3.0.jar",
            "org.lance.spark.LanceDataset lance-spark-3.5_2.12-0.4.0.jar",
            "org.apache.spark.sql.SparkSession spark-sql_2.12-3.5.5.jar")) {
          assertTrue(out.contains("ORIGIN " + origin + "\n"), origin + "; " + a.tail());
        }
        assertTrue(out.contains("UNRELOCATED okhttp3.OkHttpClient absent"), a.tail());
        assertTrue(out.contains("TABLES [sales|orders|false]"), a.tail());
        assertTrue(out.contains("FILTERED [apple, plum]"), a.tail());
        assertTrue(out.contains("VIEW [1|apple|30, 3|plum|70, 4|fig|20]\n"), a.tail());
        assertTrue(out.contains("ROWS [1|apple|3, 2|pear|1, 3|plum|7, 4|fig|2]"), a.tail());
        assertTrue(out.contains(
            "VIEW REFRESHED [1|apple|30, 3|plum|70, 4|fig|20, 5|kiwi|90]\n"), a.tail());
        assertTrue(out.contains("PENDING [7]"), a.tail());

        // 2. The refresh job: the bundle is its jar; S3 options for its catalog by --conf.
        List<String> job = new ArrayList<>(common);
        job.addAll(catalogConf(JOB_CATALOG, null, s3));
        job.addAll(List.of("--conf", "spark.lancerest.mv.query.localRefreshMaxRows=0",
            "--class", BundleOnSparkClasspathTest.REFRESH_JOB, launcher.bundleJar.toString(),
            "--uri", uri, "--view", "sales.big_orders"));
        SparkSubmitLauncher.Result j = launcher.submit("cluster-refresh-job", job);
        assertEquals(0, j.exitCode(), j.tail());
        assertTrue(j.output().contains("refresh-job: view sales.big_orders job "), j.tail());
        assertTrue(j.output().contains(" DONE kind=query ") && j.output().contains(
            " rows_inserted=1 rows_deleted=0 "), j.tail());

        // The work ran in executor JVMs of the cluster, which got the bundle from the driver.
        String logs = cluster.executorLogs();
        List<String> executors = List.of(logs.split("(?m)^== ")).stream()
            .filter(x -> !x.isBlank()).toList();
        assertEquals(2, executors.size(), "an executor for each application:\n" + tail(logs));
        for (String e : executors) {
          assertTrue(e.contains("Fetching spark://") && e.contains(bundleJar)
              && e.contains("Finished task"), "the executor fetched " + bundleJar
              + " from the driver and ran tasks:\n" + tail(e));
        }
        assertTrue(s3.keys("bundle/").stream().anyMatch(k -> k.contains("big_orders")
            && k.contains("/_versions/")), "the view's versions are on S3: " + s3.keys("bundle/"));
        System.out.println("bundle on the cluster: application " + a.took().toMillis()
            + " ms, refresh job " + j.took().toMillis() + " ms");
      }
    }
  }

  /** {@code --conf}s of catalog {@code name}: class, {@code uri} (unless null), S3 options. */
  private static List<String> catalogConf(String name, String uri, S3ProxyFixture s3) {
    String prefix = "spark.sql.catalog." + name;
    List<String> c = new ArrayList<>();
    if (uri != null) {
      c.addAll(List.of("--conf", prefix + "=" + CATALOG, "--conf", prefix + ".uri=" + uri));
    }
    for (Map.Entry<String, String> e : s3.storageOptions("storage.").entrySet()) {
      c.addAll(List.of("--conf", prefix + "." + e.getKey() + "=" + e.getValue()));
    }
    return c;
  }

  private static String tail(String text) {
    return text.length() <= 6000 ? text : text.substring(text.length() - 6000);
  }

  private static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
