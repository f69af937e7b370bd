package io.lancerest.examples;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.spark.sql.SparkSession;

/**
 * A local SparkSession configured from {@code examples/conf/spark-defaults.conf}, the file the
 * docs give to spark-shell, spark-sql and PySpark, with only the catalog's {@code uri} replaced.
 */
public final class ExampleSpark {
  /** Keys that place jars; a local session already has everything on Maven's class path. */
  public static final Set<String> CLASSPATH_KEYS =
      Set.of("spark.jars", "spark.driver.extraClassPath", "spark.executor.extraClassPath");

  private ExampleSpark() {}

  /**
   * The settings of spark-defaults.conf (whitespace-separated key and value, {@code #}
   * comments), in file order. Spark reads the file with {@link Properties}, and so does this.
   */
  public static Map<String, String> defaults(Path file) throws IOException {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file)) {
      p.load(r);
    }
    Map<String, String> out = new LinkedHashMap<>();
    for (String line : Files.readAllLines(file)) {
      String t = line.strip();
      if (!t.isEmpty() && !t.startsWith("#")) {
        String key = t.split("\\s+", 2)[0];
        out.put(key, p.getProperty(key).strip());
      }
    }
    return out;
  }

  /** Finds the file whether the JVM runs in the repository root or in {@code examples/}. */
  public static Path confFile() {
    Path inModule = Path.of("conf", "spark-defaults.conf");
    return Files.exists(inModule) ? inModule : Path.of("examples", "conf", "spark-defaults.conf");
  }

  /** A local[2] session with spark-defaults.conf applied and the catalog pointed at {@code uri}. */
  public static SparkSession session(String appName, String uri) throws IOException {
    return session(appName, uri, Map.of());
  }

  /**
   * {@link #session(String, String)} with {@code settings} applied last, so that they override
   * the file and the uri.
   */
  public static SparkSession session(String appName, String uri, Map<String, String> settings)
      throws IOException {
    SparkSession.Builder b = SparkSession.builder()
        .appName(appName)
        .master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4");
    defaults(confFile()).forEach((k, v) -> {
      if (!CLASSPATH_KEYS.contains(k)) {
        b.config(k, v);
      }
    });
    b.config("spark.sql.catalog.lance.uri", uri);
    settings.forEach(b::config);
    SparkSession spark = b.getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    return spark;
  }
}
