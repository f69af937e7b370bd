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
    return ViewMaintenance.Policy.of(confs::get, Map.of());
  }

  @Test
  void defaultsAndOverrides() {
    ViewMaintenance.Policy d = of(Map.of());
    assertEquals(new ViewMaintenance.Policy(true, 16, 65_536, 0.5, 1 << 20,
        Duration.ofDays(1)), d);
    ViewMaintenance.Policy p = of(Map.of("enabled", "false", "maxFragments", "8",
        "retention", "10min"));
    assertFalse(p.enabled());
    assertEquals(8, p.maxFragments());
    assertEquals(Duration.ofMinutes(10), p.retention());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> of(Map.of("maxSmallShare", "2")));
    assertTrue(e.getMessage().startsWith("The maintenance policy (session confs "
        + "spark.lancerest.mv.maintenance.*, view properties lancerest.mv.maintenance.*) is not "
        + "valid (out of range)"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> of(Map.of("enabled", "yes")));
    assertTrue(e.getMessage().contains("(enabled = 'yes')"), e.getMessage());
  }

  @Test
  void aViewsPropertiesOverrideTheSessionKeyByKey() {
    Map<String, String> session = Map.of("maxFragments", "8", "retention", "10min");
    ViewMaintenance.Policy p = ViewMaintenance.Policy.of(session::get, Map.of(
        "lancerest.mv.maintenance.retention", "7d",
        "lancerest.mv.maintenance.enabled", "false",
        "spark.lancerest.mv.maintenance.maxFragments", "99", // a session key: not an override
        "retention", "1s"));
    assertFalse(p.enabled());
    assertEquals(Duration.ofDays(7), p.retention());
    assertEquals(8, p.maxFragments(), "the session's, not overridden");
    assertThrows(IllegalArgumentException.class, () -> ViewMaintenance.Policy.of(session::get,
        Map.of("lancerest.mv.maintenance.maxFragments", "1")));
  }

  private static List<ViewCompaction.Frag> frags(long... rows) {
    List<ViewCompaction.Frag> out = new java.util.ArrayList<>();
    for (int i = 0; i < rows.length; i++) {
      out.add(new ViewCompaction.Frag(i, rows[i]));
    }
    return out;
  }

  @Test
  void smallFragmentsMergeByTierAndFullOnesStay() {
    long target = 1 << 20;
    // the view's first fragment (10,000 rows) and 12 refreshes of 100 rows: two tiers, each
    // merged into one fragment, the smallest tier first
    long[] rows = new long[13];
    java.util.Arrays.fill(rows, 100);
    rows[0] = 10_000;
    rows[5] = 9_000;
    assertEquals(List.of(List.of(1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12), List.of(0, 5)),
        ViewCompaction.plan(frags(rows), target, 8, 65_536, false));
    // full fragments (half the target or more) are never rewritten
    assertEquals(List.of(List.of(1, 3)),
        ViewCompaction.plan(frags(600_000, 5, 700_000, 5), target, 1, 65_536, false));
    // above smallFragmentRows a tier is merged only while the view is over the goal
    List<ViewCompaction.Frag> big = frags(100_000, 100_000, 100_000, 300_000, 300_000, 5, 5);
    assertEquals(List.of(List.of(5, 6)), ViewCompaction.plan(big, target, 6, 65_536, false));
    assertEquals(List.of(List.of(5, 6), List.of(0, 1, 2)),
        ViewCompaction.plan(big, target, 4, 65_536, false));
    // no group is larger than the target: 3 fragments of 3 rows at a target of 7
    assertEquals(List.of(List.of(0, 1)), ViewCompaction.plan(frags(3, 3, 3), 7, 1, 65_536,
        false));
    // OPTIMIZE merges whatever is not full, across tiers, in id order
    assertEquals(List.of(List.of(0, 1, 2, 4)),
        ViewCompaction.plan(frags(100_000, 5, 40_000, 900_000, 7), target, 1, 0, true));
    assertEquals(List.of(), ViewCompaction.plan(frags(5), target, 1, 65_536, true),
        "one fragment: nothing to merge");
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
