package io.lancerest.bundle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The bundle works where users put it: a Spark application on a class path of only Spark's jars
 * and the documented lance jars, with the bundle passed as {@code --jars}, reads and writes
 * tables through the catalog, and (once the engine ships them) creates and refreshes a view.
 * Also checks what the jar holds: our classes, OkHttp/Okio/Kotlin only under the relocation
 * prefix, and nothing of Spark.
 */
@Tag("slow")
class BundleOnSparkClasspathTest {
  static final String CATALOG = "io.lancerest.spark.catalog.LanceRestCatalog";
  static final String EXTENSIONS = "io.lancerest.spark.LanceRestSparkExtensions";
  static final String REFRESH_JOB = "io.lancerest.spark.mv.RefreshJob";
  static final String SHADED = "io/lancerest/shaded/";
  /** What the MV SQL answers while the refresh engine is not wired in (mv-refresh-job). */
  static final String ENGINE_NOT_YET = "need the refresh engine, which is not available in this "
      + "build yet";

  private static SparkSubmitLauncher launcher;
  private static Set<String> entries;
  private static SparkSubmitLauncher.Result smoke;

  @BeforeAll
  static void readBundle() throws IOException {
    launcher = new SparkSubmitLauncher();
    try (ZipFile zip = new ZipFile(launcher.bundleJar.toFile())) {
      entries = zip.stream().map(e -> e.getName()).collect(Collectors.toCollection(TreeSet::new));
    }
  }

  private static boolean bundled(String className) {
    return entries.contains(className.replace('.', '/') + ".class");
  }

  @Test
  void bundleHoldsOurModulesAndOnlyRelocatedOkHttpOkioKotlin() {
    assertTrue(bundled(CATALOG), "catalog class missing");
    assertTrue(bundled("io.lancerest.client.LanceRestClient"), "REST client missing");
    assertTrue(bundled("io.lancerest.spark.connector.LanceTables"), "connector missing");
    assertTrue(bundled("io.lancerest.shaded.okhttp3.OkHttpClient"), "relocated OkHttp missing");
    assertTrue(bundled("io.lancerest.shaded.okio.Buffer"), "relocated Okio missing");
    assertTrue(bundled("io.lancerest.shaded.kotlin.Unit"), "relocated Kotlin missing");
    // OkHttp reads this resource relative to its (relocated) class.
    assertTrue(entries.contains(SHADED + "okhttp3/internal/publicsuffix/publicsuffixes.gz"));

    List<String> foreign = new ArrayList<>();
    for (String e : entries) {
      boolean ours = e.startsWith("io/lancerest/") || e.startsWith("META-INF/") || e.equals("io/");
      if (!ours) {
        foreign.add(e);
      }
    }
    // Nothing outside our package: no unrelocated okhttp3/okio/kotlin, no Spark, Scala, Hadoop,
    // Arrow, Jackson or lance classes.
    assertEquals(List.of(), foreign.subList(0, Math.min(20, foreign.size())));
    assertFalse(entries.stream().anyMatch(e -> e.startsWith("org/apache/spark/")));
  }

  @Test
  void bundleLeavesSparkAndLanceJarsOut() throws IOException {
    long bundleSize = Files.size(launcher.bundleJar);
    assertTrue(bundleSize < 8L << 20, "bundle grew to " + bundleSize + " bytes: check the "
        + "artifactSet in bundle/pom.xml before shipping lance-core or Spark in it");
    // The lance jars are the documented list; none of them is also in Spark's class path under
    // another version, except the ones that must override Spark's (Arrow, flatbuffers).
    Set<String> spark = launcher.sparkClasspath().stream()
        .map(p -> Path.of(p).getFileName().toString()).collect(Collectors.toSet());
    try (Stream<Path> jars = Files.list(launcher.lanceJars)) {
      List<String> lance = jars.map(p -> p.getFileName().toString()).sorted().toList();
      assertTrue(lance.contains("lance-core-4.0.0.jar"), lance.toString());
      assertTrue(lance.contains("arrow-vector-18.3.0.jar"), lance.toString());
      assertTrue(spark.contains("arrow-vector-12.0.1.jar"), "Spark's own Arrow expected");
      assertEquals(List.of(), lance.stream().filter(spark::contains).toList(),
          "lance jars duplicating Spark's");
    }
  }

  @Test
  void documentedLanceJarListIsTheOneTheBuildCopies() throws IOException {
    String doc = Files.readString(launcher.packagingDoc);
    // Markers on lines of their own (the fetch loop in the doc mentions them inline too).
    int from = doc.indexOf("\n<!-- lance-jars -->\n");
    int to = doc.indexOf("\n<!-- /lance-jars -->\n");
    assertTrue(from >= 0 && to > from, "lance-jars markers missing in " + launcher.packagingDoc);
    // group:artifact:version -> artifact-version.jar, the name dependency:copy gives it.
    List<String> documented = doc.substring(from + 1, to).lines().skip(1)
        .map(String::trim).filter(l -> !l.isEmpty())
        .map(l -> l.split(":")).map(c -> c[1] + "-" + c[2] + ".jar").sorted().toList();
    try (Stream<Path> jars = Files.list(launcher.lanceJars)) {
      assertEquals(jars.map(p -> p.getFileName().toString()).sorted().toList(), documented,
          "docs/packaging.md and the lance-jars execution of bundle/pom.xml disagree");
    }
  }

  @Test
  void sparkApplicationReadsAndWritesThroughTheBundle() {
    SparkSubmitLauncher.Result r = smokeRun();
    String out = r.output();
    assertTrue(r.exitCode() == 0 || r.exitCode() == BundleSmokeApp.VIEWS_FAILED, r.tail());
    String bundleName = launcher.bundleJar.getFileName().toString();
    assertTrue(out.contains("ORIGIN " + CATALOG + " " + bundleName + "\n"), r.tail());
    assertTrue(out.contains("ORIGIN io.lancerest.shaded.okhttp3.OkHttpClient " + bundleName),
        r.tail());
    // The lance jars' Arrow 18 wins over Spark's Arrow 12.
    assertTrue(out.contains("ORIGIN org.apache.arrow.vector.VectorSchemaRoot "
        + "arrow-vector-18.3.0.jar"), r.tail());
    assertTrue(out.contains("ORIGIN org.lance.spark.LanceDataset lance-spark-3.5_2.12-0.4.0.jar"),
        r.tail());
    assertTrue(out.contains("ORIGIN org.apache.spark.sql.SparkSession spark-sql_2.12-3.5.5.jar"),
        r.tail());
    assertTrue(out.contains("UNRELOCATED okhttp3.OkHttpClient absent"), r.tail());

    assertTrue(out.contains("TABLES [sales|orders|false]"), r.tail());
    assertTrue(out.contains("ROWS [1|apple|3, 2|pear|1, 3|plum|7, 4|fig|2]"), r.tail());
    assertTrue(out.contains("FILTERED [apple, plum]"), r.tail());
    assertTrue(out.contains("CATALOG DONE"), r.tail());
  }

  @Test
  void queryViewIsCreatedAndRefreshedThroughTheBundle() {
    assumeTrue(bundled(EXTENSIONS), EXTENSIONS + " is not in the bundle yet (issue 4)");
    SparkSubmitLauncher.Result r = smokeRun();
    // The SQL extension ships before the refresh engine does; until then the engine says so
    // itself, and only that exact refusal is tolerated.
    assumeTrue(r.exitCode() != BundleSmokeApp.VIEWS_FAILED
        || !r.output().contains(ENGINE_NOT_YET), "view engine not in this build yet: " + r.tail());
    assertEquals(0, r.exitCode(), r.tail());
    assertTrue(r.output().contains("VIEW [1|apple|30, 3|plum|70, 4|fig|20]\n"), r.tail());
    assertTrue(r.output().contains(
        "VIEW REFRESHED [1|apple|30, 3|plum|70, 4|fig|20, 5|kiwi|90]\n"), r.tail());
    assertTrue(r.output().contains("VIEWS DONE"), r.tail());
  }

  @Test
  void refreshJobHelpRunsFromTheBundleUnderSparkSubmit() {
    assumeTrue(bundled(REFRESH_JOB), REFRESH_JOB + " is not in the bundle yet (issue 4)");
    SparkSubmitLauncher.Result r = launcher.submit("refresh-job-help", List.of(
        "--class", REFRESH_JOB, launcher.bundleJar.toString(), "--help"));
    assertEquals(0, r.exitCode(), r.tail());
    assertTrue(r.output().contains("--uri") && r.output().contains("--view"), r.tail());
  }

  /** One child JVM for both Spark tests: it costs most of this class's run time. */
  private static synchronized SparkSubmitLauncher.Result smokeRun() {
    if (smoke == null) {
      Path warehouse = freshDir(launcher.workDir.resolve("warehouse"));
      int port = freePort();
      List<String> args = new ArrayList<>(List.of(
          "--master", "local[2]",
          "--conf", "spark.ui.enabled=false",
          "--conf", "spark.log.level=WARN",
          "--conf", "spark.sql.shuffle.partitions=2",
          "--conf", "spark.sql.catalog.lance=" + CATALOG,
          "--conf", "spark.sql.catalog.lance.uri=http://127.0.0.1:" + port));
      if (bundled(EXTENSIONS)) {
        args.addAll(List.of("--conf", "spark.sql.extensions=" + EXTENSIONS));
      }
      args.addAll(List.of(
          "--jars", launcher.bundleJar.toString(),
          "--class", BundleSmokeApp.class.getName(),
          launcher.appJar.toString(), warehouse.toString(), Integer.toString(port)));
      if (bundled(EXTENSIONS)) {
        args.add("--with-mv");
      }
      smoke = launcher.submit("smoke", args);
      System.out.println("bundle smoke run: exit " + smoke.exitCode() + " in "
          + smoke.took().toMillis() + " ms");
    }
    return smoke;
  }

  private static Path freshDir(Path dir) {
    try {
      if (Files.exists(dir)) {
        try (Stream<Path> walk = Files.walk(dir)) {
          for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
            Files.delete(p);
          }
        }
      }
      return Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
