package io.lancerest.spark.mv.server;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;

/**
 * The view service in a JVM of its own, to be killed mid-refresh: its session has a function
 * {@code svc_stall(x)} that, on its third row, creates the marker file and blocks. Arguments:
 * upstream uri, port file (the service's port is written there once it listens), marker path.
 */
public final class ChildServiceMain {
  private static final AtomicInteger ROWS = new AtomicInteger();

  private ChildServiceMain() {}

  public static void main(String[] args) throws Exception {
    SparkSession spark = SparkSession.builder().master("local[1]").appName("service-child")
        .config("spark.ui.enabled", "false")
        .config("spark.testing.memory", String.valueOf(1L << 30))
        .getOrCreate();
    String marker = args[2]; // a String: the function is shipped to the task
    spark.udf().register("svc_stall", (UDF1<String, String>) x -> {
      if (ROWS.incrementAndGet() == 3) {
        Files.createFile(Path.of(marker));
        Thread.sleep(Long.MAX_VALUE);
      }
      return x;
    }, DataTypes.StringType);
    MaterializedViewServer service = MaterializedViewServer.start(spark, ServerConfig.parse(
        new String[] {"--upstream", args[0], "--port", "0", "--auto-refresh", "false"}));
    Path ready = Path.of(args[1] + ".tmp");
    Files.writeString(ready, Integer.toString(service.port()));
    Files.move(ready, Path.of(args[1]));
    Thread.sleep(Long.MAX_VALUE);
  }
}
