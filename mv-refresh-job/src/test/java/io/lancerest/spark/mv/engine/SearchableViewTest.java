package io.lancerest.spark.mv.engine;

import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A view serves search across its refreshes, on a local folder: {@link SearchableViewScenario}
 * (the same scenario runs on S3 through a cluster in {@link ObjectStoreClusterTest}).
 */
class SearchableViewTest {
  static EngineFixture f;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of("mv.mode", "client"));
  }

  @AfterAll
  static void stop() {
    if (f != null) {
      f.close();
    }
  }

  @Test
  void aChunkerViewKeepsServingSearchThroughTenRefreshes() {
    SearchableViewScenario.run(f);
  }
}
