package io.lancerest.bundle;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code org.apache.spark.deploy.SparkSubmit} in a fresh JVM the way {@code spark-submit}
 * would on a Spark install: Java 17 {@code --add-opens} flags, and a class path of the lance jars
 * (standing in for {@code --driver-class-path}, which the launcher script puts before Spark's
 * own jars) followed by Spark's jars. Nothing from this build's test class path leaks in.
 *
 * <p>Paths come from system properties the bundle pom sets: see {@code bundle/pom.xml}.
 */
final class SparkSubmitLauncher {
  /** What a child JVM did: exit code, combined stdout+stderr, and wall time. */
  record Result(int exitCode, String output, Duration took, Path log) {
    /** The output's last lines, for assertion messages. */
    String tail() {
      List<String> lines = output.lines().toList();
      return "exit " + exitCode + ", log " + log + ", last lines:\n"
          + String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
    }
  }

  private static final Duration TIMEOUT = Duration.ofMinutes(3);

  final Path bundleJar = requiredPath("bundle.jar");
  final Path appJar = requiredPath("bundle.app.jar");
  final Path lanceJars = requiredPath("bundle.lance.jars");
  final Path workDir = Path.of(required("bundle.work.dir"));
  final Path packagingDoc = requiredPath("bundle.packaging.doc");
  private final List<String> sparkClasspath;
  private final List<String> javaOpens;

  SparkSubmitLauncher() {
    try {
      String cp = Files.readString(requiredPath("bundle.spark.classpath")).trim();
      sparkClasspath = Arrays.asList(cp.split(File.pathSeparator));
      Files.createDirectories(workDir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    javaOpens = Arrays.stream(required("bundle.java.opens").trim().split("\\s+")).toList();
  }

  /** Spark's own jars, as resolved from spark-sql 3.5.5's dependency tree. */
  List<String> sparkClasspath() {
    return sparkClasspath;
  }

  /**
   * Runs {@code SparkSubmit <args>}; the output goes to {@code <work dir>/<name>.log}. Fails the
   * calling test with the log's tail if the JVM does not finish within the timeout.
   */
  Result submit(String name, List<String> args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(javaOpens);
    cmd.add("-Xmx1g");
    // A short local job on a 2-core machine: C1 only and a serial GC halve the wall time
    // (measured 31 s vs 73 s). They change no class loading, so the result still stands.
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-cp");
    // The documented `<dir>/*` form: the JVM expands it, lance jars first so Arrow 18 wins.
    cmd.add(lanceJars.resolve("*") + File.pathSeparator
        + String.join(File.pathSeparator, sparkClasspath));
    cmd.add("org.apache.spark.deploy.SparkSubmit");
    cmd.addAll(args);
    Path log = workDir.resolve(name + ".log");
    long start = System.nanoTime();
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
          .redirectOutput(log.toFile()).start();
      if (!p.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor();
        throw new AssertionError("spark-submit '" + name + "' did not finish within " + TIMEOUT
            + "; see " + log);
      }
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8), took, log);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting for spark-submit '" + name + "'", e);
    }
  }

  private static String required(String property) {
    String v = System.getProperty(property);
    if (v == null || v.isBlank()) {
      throw new IllegalStateException("System property " + property + " is not set: run this "
          + "test through Maven (`mvn -pl bundle verify`), which sets it in bundle/pom.xml");
    }
    return v;
  }

  private static Path requiredPath(String property) {
    Path p = Path.of(required(property));
    if (!Files.exists(p)) {
      throw new IllegalStateException(property + " = " + p + " does not exist: it is built in "
          + "the package phase, so run `mvn -pl bundle verify`, not `mvn test`");
    }
    return p;
  }
}
