package io.lancerest.spark.mv.query;

import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.Probes;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.engine.DefaultMaterializedViewsFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.sql.SparkSession;

/**
 * Runs one query-view refresh in its own JVM and blocks it in the middle of writing: after the
 * third Arrow batch a write task creates the marker file and waits to be killed. Arguments:
 * server uri, namespace, view name, marker path.
 */
public final class ChildQueryRefreshMain {
  private ChildQueryRefreshMain() {}

  public static void main(String[] args) throws Exception {
    SparkSession spark = SparkSession.builder().master("local[1]").appName("query-child")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.catalog.lance", "io.lancerest.spark.catalog.LanceRestCatalog")
        .config("spark.sql.catalog.lance.uri", args[0])
        .config(MaterializedViews.FACTORY_CONF, DefaultMaterializedViewsFactory.class.getName())
        .getOrCreate();
    String marker = args[3];
    AtomicInteger batches = new AtomicInteger();
    // The write task's copy of the listener counts its own batches.
    Probes stall = new Probes().afterTaskBatch(partition -> {
      if (batches.incrementAndGet() == 3) {
        try {
          Files.createFile(Path.of(marker));
          Thread.sleep(Long.MAX_VALUE);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
    });
    MaterializedViews.forCatalog(spark, "lance").refresh(List.of(args[1], args[2]),
        new RefreshOptions(null, null, 2000, null, null, null, null, null, "child-job", false),
        stall);
    System.out.println("RESULT finished without being killed");
  }
}
