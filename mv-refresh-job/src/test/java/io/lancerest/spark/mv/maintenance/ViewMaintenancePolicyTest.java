package io.lancerest.spark.mv.maintenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The policy's confs and thresholds, without Spark. */
class ViewMaintenancePolicyTest {
  private static ViewMaintenance.Policy of(Map<String, String> confs) {
    return ViewMaintenance.Policy.of(confs::get);
  }

  @Test
  void defaultsAndOverrides() {
    ViewMaintenance.Policy d = of(Map.of());
    assertEquals(new ViewMaintenance.Policy(false, 16, 65_536, 0.5, 1 << 20,
        Duration.ofHours(1)), d);
    ViewMaintenance.Policy p = of(Map.of("enabled", "true", "maxFragments", "8",
        "retention", "10min"));
    assertTrue(p.enabled());
    assertEquals(8, p.maxFragments());
    assertEquals(Duration.ofMinutes(10), p.retention());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> of(Map.of("maxSmallShare", "2")));
    assertTrue(e.getMessage().startsWith("The spark.lancerest.mv.maintenance.* confs are not a "
        + "valid maintenance policy"), e.getMessage());
  }

  @Test
  void compactionWhenTooManyFragmentsOrMostlySmallOnes() {
    ViewMaintenance.Policy p = of(Map.of("maxFragments", "10", "smallFragmentRows", "100"));
    assertFalse(ViewMaintenance.needsCompaction(List.of(5L), p, 1 << 20), "one fragment");
    assertFalse(ViewMaintenance.needsCompaction(Collections.nCopies(10, 1000L), p, 1 << 20));
    assertTrue(ViewMaintenance.needsCompaction(Collections.nCopies(11, 1000L), p, 1 << 20),
        "11 > 10");
    assertFalse(ViewMaintenance.needsCompaction(Collections.nCopies(7, 5L), p, 1 << 20),
        "fewer than 8 fragments, however small");
    List<Long> mostlySmall = new java.util.ArrayList<>(Collections.nCopies(5, 5L));
    mostlySmall.addAll(Collections.nCopies(4, 1000L));
    assertTrue(ViewMaintenance.needsCompaction(mostlySmall, p, 1 << 20), "5 of 9 small");
    List<Long> halfSmall = new java.util.ArrayList<>(Collections.nCopies(4, 5L));
    halfSmall.addAll(Collections.nCopies(4, 1000L));
    assertFalse(ViewMaintenance.needsCompaction(halfSmall, p, 1 << 20),
        "4 of 8: not more than half");
    // fragments full at the refresh's max_rows_per_fragment are left alone, however many
    assertFalse(ViewMaintenance.needsCompaction(Collections.nCopies(18, 7L), p, 7));
    assertTrue(ViewMaintenance.needsCompaction(Collections.nCopies(18, 3L), p, 7),
        "18 fragments of 3 rows would be 8 of 7");
  }

  @Test
  void theRetentionCountsFromWhenAVersionWasReplaced() {
    java.time.ZonedDateTime t0 = java.time.ZonedDateTime.parse("2026-12-01T10:00:00Z");
    List<org.lance.Version> versions = List.of(
        new org.lance.Version(1, t0, new java.util.TreeMap<>()),
        new org.lance.Version(2, t0.plusHours(1), new java.util.TreeMap<>()),
        new org.lance.Version(3, t0.plusHours(5), new java.util.TreeMap<>()));
    long cutoff = t0.plusHours(2).toInstant().toEpochMilli();
    // version 2 was the view until version 3 replaced it, after the cutoff: it stays
    assertEquals(2L, ViewMaintenance.oldestKept(versions, cutoff));
    assertEquals(null, ViewMaintenance.oldestKept(versions, t0.minusHours(1).toInstant()
        .toEpochMilli()), "nothing is older than the cutoff");
    assertEquals(null, ViewMaintenance.oldestKept(versions.subList(0, 1), cutoff),
        "the only version is never removed");
  }
}
