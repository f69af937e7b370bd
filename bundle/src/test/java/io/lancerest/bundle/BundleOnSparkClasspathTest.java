package io.lancerest.bundle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
 * What the bundle holds (our classes, OkHttp/Okio/Kotlin only under the relocation prefix,
 * nothing of Spark or lance), that the lance jars of docs/packaging.md are the ones the build
 * copies, and that the refresh job's {@code --help} runs from it under {@code spark-submit}. The
 * applications themselves run on a cluster in {@link BundleClusterTest}.
 */
@Tag("slow")
class BundleOnSparkClasspathTest {
  static final String CATALOG = "io.lancerest.spark.catalog.LanceRestCatalog";
  static final String EXTENSIONS = "io.lancerest.spark.LanceRestSparkExtensions";
  static final String REFRESH_JOB = "io.lancerest.spark.mv.RefreshJob";
  static final String SHADED = "io/lancerest/shaded/";

  private static SparkSubmitLauncher launcher;
  private static Set<String> entries;

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
  void refreshJobHelpRunsFromTheBundleUnderSparkSubmit() {
    assertTrue(bundled(REFRESH_JOB), REFRESH_JOB + " is missing from the bundle");
    SparkSubmitLauncher.Result r = launcher.submit("refresh-job-help", List.of(
        "--class", REFRESH_JOB, launcher.bundleJar.toString(), "--help"));
    assertEquals(0, r.exitCode(), r.tail());
    assertTrue(r.output().contains("--uri") && r.output().contains("--view"), r.tail());
  }




}
