package io.lancerest.spark.computed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The checkpoint's stored form and the backfill options, without Spark. */
class BackfillCheckpointTest {
  @Test
  void doneFragmentsAreStoredAsRangesAndReadBack() {
    BackfillCheckpoint empty = BackfillCheckpoint.read(Map.of(), "emb", "abc", 7);
    Map<String, String> config = empty.with(List.of(0L, 1L, 2L, 5L, 7L, 8L, 12L));
    assertEquals(Map.of("lancerest::computed::emb::udf_sha", "abc",
        "lancerest::computed::emb::field_id", "7",
        "lancerest::computed::emb::done", "0-2,5,7-8,12"), config);
    assertEquals(new TreeSet<>(List.of(0L, 1L, 2L, 5L, 7L, 8L, 12L)),
        BackfillCheckpoint.read(config, "emb", "abc", 7).done());
  }

  @Test
  void anotherDefinitionOrFieldIdMeansNothingIsDone() {
    Map<String, String> config = BackfillCheckpoint.read(Map.of(), "emb", "abc", 7)
        .with(List.of(3L));
    assertEquals(new TreeSet<>(), BackfillCheckpoint.read(config, "emb", "def", 7).done());
    assertEquals(new TreeSet<>(), BackfillCheckpoint.read(config, "emb", "abc", 9).done());
    assertEquals(new TreeSet<>(), BackfillCheckpoint.read(config, "other", "abc", 7).done());
  }

  @Test
  void optionsAreParsedAndBadOnesRefusedByName() {
    BackfillOptions o = BackfillOptions.parse("lance.ns.t", "emb", Map.of("BATCH_SIZE", "64",
        "commit_granularity", "2", "read_version", "9", "error_handling", "Retry",
        "retries", "5", "where", "id > 3"));
    assertEquals(new BackfillOptions(64, 2, 9L, BackfillOptions.ErrorMode.RETRY, 5, "id > 3"),
        o);
    assertEquals(BackfillOptions.defaults(), BackfillOptions.parse("t", "c", Map.of()));
    assertEquals("Backfill of column 'emb' of table lance.ns.t: option batch_size = '0' must be "
        + "a positive whole number.", assertThrows(ComputedColumnException.class,
            () -> BackfillOptions.parse("lance.ns.t", "emb", Map.of("batch_size", "0")))
            .getMessage());
    assertEquals("Backfill of column 'emb' of table lance.ns.t: error_handling 'ignore' is not "
        + "one of fail, skip, retry.", assertThrows(ComputedColumnException.class,
            () -> BackfillOptions.parse("lance.ns.t", "emb", Map.of("error_handling",
                "ignore"))).getMessage());
  }
}
