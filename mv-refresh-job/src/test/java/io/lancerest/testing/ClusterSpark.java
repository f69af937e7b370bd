package io.lancerest.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkContext$;
import org.apache.spark.sql.SparkSession;

/**
 * A {@link StandaloneCluster} (one Worker, 2 cores, 1 GiB) and this JVM's SparkContext on it:
 * one executor of 2 cores. A class using it runs in a test JVM of its own (the {@code own-jvm}
 * execution of mv-refresh-job/pom.xml), since a JVM holds one SparkContext; sessions come from
 * TestSpark with {@link #master()}, which finds this context and uses it.
 *
 * <p>Executors get {@code -Dlancerest.test.signals=}{@link #signals}: a folder shared by the
 * test and the executor JVMs (all on this machine) through which test functions are slowed
 * down and report the executor that runs them (io.lancerest.faults.Injected).
 */
public final class ClusterSpark implements AutoCloseable {
  public final StandaloneCluster cluster;
  public final Path signals;
  public final SparkContext context;

  public ClusterSpark() {
    this(Map.of());
  }

  /** With {@code extraConf} in the application's SparkConf (event log, broadcast settings ...). */
  public ClusterSpark(Map<String, String> extraConf) {
    this(extraConf, 2);
  }

  /**
   * {@link #ClusterSpark(Map)} with one Worker and one executor of {@code cores} cores (more
   * than the machine has is fine for tasks that mostly sleep).
   */
  public ClusterSpark(Map<String, String> extraConf, int cores) {
    if (SparkContext$.MODULE$.getActive().isDefined()) {
      throw new IllegalStateException("This JVM already runs a SparkContext ("
          + SparkContext$.MODULE$.getActive().get().master() + "): cluster test classes run in"
          + " JVMs of their own (own-jvm execution of mv-refresh-job/pom.xml)");
    }
    try {
      signals = Files.createTempDirectory("cluster-signals");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    cluster = StandaloneCluster.start(1, cores, "1g");
    try {
      SparkSession.Builder b = SparkSession.builder().appName("mv-refresh-job-cluster-tests")
          .config("spark.sql.shuffle.partitions", "2");
      Map<String, String> conf = cluster.appConf(cores, "1g", cores, "-Dlancerest.test.signals="
          + signals);
      conf.forEach(b::config);
      extraConf.forEach(b::config);
      context = b.getOrCreate().sparkContext();
      SparkSession.clearActiveSession();
      SparkSession.clearDefaultSession();
      awaitExecutors(1);
    } catch (RuntimeException | Error e) {
      close();
      throw e;
    }
  }

  /** The master URL sessions must ask TestSpark for. */
  public String master() {
    return cluster.masterUrl();
  }

  /** Waits until {@code n} executors have registered with the driver. */
  public void awaitExecutors(int n) {
    long end = System.nanoTime() + StandaloneCluster.WAIT.toNanos();
    // getExecutorInfos lists the driver too
    while (context.statusTracker().getExecutorInfos().length < n + 1) {
      if (System.nanoTime() > end) {
        throw new AssertionError("Within " + StandaloneCluster.WAIT.toSeconds() + " s, no "
            + n + " executor(s) registered with the driver; executor JVMs: "
            + cluster.executors() + "\n" + cluster.logs());
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted", e);
      }
    }
  }

  @Override
  public void close() {
    try {
      SparkContext sc = SparkContext$.MODULE$.getActive().getOrElse(() -> null);
      if (sc != null) {
        sc.stop();
      }
    } finally {
      try {
        cluster.close();
      } finally {
        try (java.util.stream.Stream<Path> all = Files.walk(signals)) {
          all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
          // a leftover temporary folder is no failure
        }
      }
    }
  }
}
