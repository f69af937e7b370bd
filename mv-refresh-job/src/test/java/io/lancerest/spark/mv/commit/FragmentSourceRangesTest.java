package io.lancerest.spark.mv.commit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.rowindex.FragmentSourceRanges;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * Source row id ranges of view fragments: how {@link ViewCommit} merges them, the metadata
 * format, which fragments a lookup reads, and what {@link FragmentShipping#writeRows} records.
 * The table starts with two fragments (source ids 0..4 and 5..9) at version 3, without ranges.
 */
class FragmentSourceRangesTest {
  private static final String KEY = FragmentSourceRanges.KEY;
  private static BufferAllocator allocator;
  @TempDir Path dir;
  private String uri;

  @BeforeAll
  static void allocator() {
    allocator = new RootAllocator();
  }

  @AfterAll
  static void close() {
    allocator.close();
  }

  @BeforeEach
  void table() {
    uri = dir.resolve("view.lance").toString();
    LanceFixtures.twoFragments(allocator, uri);
  }

  private Map<Integer, FragmentSourceRanges.Entry> recorded() {
    try (Dataset ds = Dataset.open(uri, allocator)) {
      Map<String, String> md = ds.getSchema().getCustomMetadata();
      return FragmentSourceRanges.parse(md == null ? null : md.get(KEY));
    }
  }

  private String rawValue() {
    try (Dataset ds = Dataset.open(uri, allocator)) {
      Map<String, String> md = ds.getSchema().getCustomMetadata();
      return md == null ? null : md.get(KEY);
    }
  }

  private Map<Integer, FragmentMetadata> fragments() {
    Map<Integer, FragmentMetadata> out = new TreeMap<>();
    try (Dataset ds = Dataset.open(uri, allocator)) {
      ds.getFragments().forEach(f -> out.put(f.getId(), f.metadata()));
    }
    return out;
  }

  private static FragmentSourceRanges.Entry entry(long min, long max, FragmentMetadata f) {
    return new FragmentSourceRanges.Entry(min, max, FragmentSourceRanges.fileTag(f));
  }

  private long version() {
    try (Dataset ds = Dataset.open(uri, allocator)) {
      return ds.version();
    }
  }

  @Test
  void newFragmentsGetEntriesUnderTheirFinalIdsAndKeptOnesKeepTheirs() {
    // fragments 0 and 1 were written without ranges: no entry
    ViewCommit.builder(uri, 3)
        .addFragments(LanceFixtures.fragments(allocator, uri, 100, 103),
            List.of(range(100, 102)))
        .build().commit();
    Map<Integer, FragmentMetadata> f = fragments();
    assertEquals(List.of(0, 1, 2), new ArrayList<>(f.keySet()));
    assertEquals(Map.of(2, entry(100, 102, f.get(2))), recorded());

    // a deletion in fragment 2 keeps its entry; the new fragment gets id 3
    ViewCommit.builder(uri, 4).deleteWhere("__source_row_id = 101")
        .addFragments(LanceFixtures.fragments(allocator, uri, 200, 205),
            List.of(range(200, 204)))
        .build().commit();
    f = fragments();
    assertEquals(Map.of(2, entry(100, 102, f.get(2)), 3, entry(200, 204, f.get(3))),
        recorded());
    assertEquals("2:100-102:" + FragmentSourceRanges.fileTag(f.get(2)) + ",3:200-204:"
        + FragmentSourceRanges.fileTag(f.get(3)), rawValue());
  }

  @Test
  void theEntryOfAFragmentThatLeavesTheViewDropsAndAReusedIdGetsOnlyItsOwn() {
    ViewCommit.builder(uri, 3)
        .addFragments(LanceFixtures.fragments(allocator, uri, 100, 103),
            List.of(range(100, 102)))
        .build().commit();
    // every row of fragment 2 deleted: it leaves the view, and so does its entry
    ViewCommit.builder(uri, 4).deleteWhere("__source_row_id >= 100").build().commit();
    assertEquals(List.of(0, 1), new ArrayList<>(fragments().keySet()));
    assertNull(rawValue(), "no entries left: no key");
    // the next new fragment takes id 2 again (ViewCommit numbers from the highest id + 1), and
    // has no range: it must not inherit the old one
    ViewCommit.builder(uri, 5).addFragments(LanceFixtures.fragments(allocator, uri, 300, 302))
        .build().commit();
    assertEquals(List.of(0, 1, 2), new ArrayList<>(fragments().keySet()));
    assertEquals(Map.of(), recorded());
  }

  @Test
  void replaceAllRowsKeepsOnlyTheNewEntries() {
    ViewCommit.builder(uri, 3)
        .addFragments(LanceFixtures.fragments(allocator, uri, 100, 103),
            List.of(range(100, 102)))
        .build().commit();
    ViewCommit.builder(uri, 4).replaceAllRows()
        .addFragments(LanceFixtures.fragments(allocator, uri, 50, 60),
            List.of(range(50, 59)))
        .build().commit();
    Map<Integer, FragmentMetadata> f = fragments();
    assertEquals(1, f.size());
    int id = f.keySet().iterator().next();
    assertEquals(Map.of(id, entry(50, 59, f.get(id))), recorded());
  }

  @Test
  void commitsWithoutRangesLeaveOtherKindsWithoutTheKeyAndAnExplicitNullRemovesIt() {
    // other kinds (chunker, UDTF) add fragments without ranges: the key never appears
    ViewCommit.builder(uri, 3).addFragments(LanceFixtures.fragments(allocator, uri, 100, 103))
        .schemaMetadata(Map.of("geneva::view::version", "2")).build().commit();
    try (Dataset ds = Dataset.open(uri, allocator)) {
      assertEquals(Map.of("geneva::view::version", "2"), ds.getSchema().getCustomMetadata());
    }
    ViewCommit.builder(uri, 4).addFragments(LanceFixtures.fragments(allocator, uri, 200, 201),
        List.of(range(200, 200))).build().commit();
    assertEquals(1, recorded().size());
    // a caller that sets the key itself gets exactly that: here, removed
    java.util.HashMap<String, String> strip = new java.util.HashMap<>();
    strip.put(KEY, null);
    ViewCommit.builder(uri, 5).schemaMetadata(strip)
        .addFragments(LanceFixtures.fragments(allocator, uri, 300, 301),
            List.of(range(300, 300)))
        .build().commit();
    assertNull(rawValue());
  }

  @Test
  void rangesMustMatchTheFragments() {
    List<FragmentMetadata> two = LanceFixtures.fragments(allocator, uri, 100, 103);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ViewCommit.builder(uri, 3).addFragments(two, List.of(range(1, 2),
            range(3, 4))));
    assertEquals("2 source ranges for 1 fragments", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> range(5, 2));
    assertEquals("source range must be min <= max, got 5-2", e.getMessage());
  }

  @Test
  void aLookupReadsFragmentsWithoutAValidEntryAndThoseWhoseRangeHoldsAWantedId() {
    ViewCommit.builder(uri, 3)
        .addFragments(LanceFixtures.fragments(allocator, uri, 100, 110),
            List.of(range(100, 109)))
        .build().commit();
    ViewCommit.builder(uri, 4)
        .addFragments(LanceFixtures.fragments(allocator, uri, 200, 210),
            List.of(range(200, 209)))
        .build().commit();
    Map<Integer, FragmentMetadata> f = fragments(); // 0, 1: no entry; 2: 100..109; 3: 200..209
    List<FragmentMetadata> all = new ArrayList<>(f.values());
    String value = rawValue();
    assertEquals(List.of(0, 1, 2), FragmentSourceRanges.fragmentsHolding(all, value,
        Roaring64NavigableMap.bitmapOf(3, 105)));
    assertEquals(List.of(0, 1), FragmentSourceRanges.fragmentsHolding(all, value,
        Roaring64NavigableMap.bitmapOf(99, 110, 150, 199, 210)), "gaps between ranges");
    assertEquals(List.of(0, 1, 2, 3), FragmentSourceRanges.fragmentsHolding(all, value,
        Roaring64NavigableMap.bitmapOf(100, 209)), "range ends are inclusive");
    // an entry whose file tag is not the fragment's (another fragment under a reused id) is
    // ignored, however far its range
    String forged = value.replace(":" + FragmentSourceRanges.fileTag(f.get(3)), ":zzzz");
    assertEquals(List.of(0, 1, 3), FragmentSourceRanges.fragmentsHolding(all, forged,
        Roaring64NavigableMap.bitmapOf(3)));
    // unreadable values and entries: those fragments are read
    assertEquals(List.of(0, 1, 2, 3), FragmentSourceRanges.fragmentsHolding(all, "garbage",
        Roaring64NavigableMap.bitmapOf(3)));
    assertEquals(List.of(0, 1, 3), FragmentSourceRanges.fragmentsHolding(all,
        value.replace("3:200-209", "3:2x0-209"), Roaring64NavigableMap.bitmapOf(3)));
  }

  @Test
  void holdsAnyCountsIdsInTheInclusiveRange() {
    Roaring64NavigableMap ids = Roaring64NavigableMap.bitmapOf(0, 10, 1L << 40);
    assertTrue(FragmentSourceRanges.holdsAny(ids, 0, 0));
    assertTrue(FragmentSourceRanges.holdsAny(ids, 10, 10));
    assertFalse(FragmentSourceRanges.holdsAny(ids, 1, 9));
    assertFalse(FragmentSourceRanges.holdsAny(ids, 11, (1L << 40) - 1));
    assertTrue(FragmentSourceRanges.holdsAny(ids, 11, 1L << 40));
    assertFalse(FragmentSourceRanges.holdsAny(ids, (1L << 40) + 1, Long.MAX_VALUE));
    assertTrue(FragmentSourceRanges.holdsAny(ids, -5, 3), "negative bounds: always read");
  }

  @Test
  void formatParsesBackAndKeepsTheLargestFragmentsOverTheCap() {
    Map<Integer, FragmentSourceRanges.Entry> e = new TreeMap<>();
    Map<Integer, Long> rows = new HashMap<>();
    int n = FragmentSourceRanges.MAX_ENTRIES + 10;
    for (int i = 0; i < n; i++) {
      e.put(i, new FragmentSourceRanges.Entry(i * 1_000_000L, i * 1_000_000L + 999_999,
          "t" + i));
      rows.put(i, i < 10 ? 1L : 1_000_000L); // fragments 0..9 are the small ones
    }
    String v = FragmentSourceRanges.format(e, rows);
    Map<Integer, FragmentSourceRanges.Entry> back = FragmentSourceRanges.parse(v);
    assertEquals(FragmentSourceRanges.MAX_ENTRIES, back.size());
    for (int i = 0; i < n; i++) {
      assertEquals(i < 10 ? null : e.get(i), back.get(i), "entry " + i);
    }
    // the documented size: about 35 bytes an entry for ids below 10^10
    assertTrue(v.length() < FragmentSourceRanges.MAX_ENTRIES * 40, "length " + v.length());
    assertNull(FragmentSourceRanges.format(Map.of(), rows));
  }

  private static FragmentSourceRanges.Range range(long min, long max) {
    return new FragmentSourceRanges.Range(min, max, false);
  }

  /** Rows {@code [__source_row_id, v]} for {@code ids}, in order. */
  private static Iterator<InternalRow> rows(long[] ids) {
    List<InternalRow> out = new ArrayList<>();
    for (long id : ids) {
      out.add(new GenericInternalRow(new Object[] {id, UTF8String.fromString("v" + id)}));
    }
    return out.iterator();
  }

  /** {fragment id → {min, max}} of __source_row_id in the committed fragments. */
  private Map<Integer, long[]> actualRanges() {
    Map<Integer, long[]> out = new TreeMap<>();
    try (Dataset ds = Dataset.open(uri, allocator);
        LanceScanner s = ds.newScan(new ScanOptions.Builder()
            .columns(List.of("__source_row_id")).withRowAddress(true).build());
        ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        VectorSchemaRoot root = r.getVectorSchemaRoot();
        BigIntVector id = (BigIntVector) root.getVector("__source_row_id");
        for (int i = 0; i < root.getRowCount(); i++) {
          int frag = (int) (((Number) root.getVector("_rowaddr").getObject(i)).longValue() >>> 32);
          long v = id.get(i);
          out.merge(frag, new long[] {v, v},
              (a, b) -> new long[] {Math.min(a[0], b[0]), Math.max(a[1], b[1])});
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return out;
  }

  @Test
  void writeRowsRecordsEachFragmentsRangeAndIndexesThoseWhoseIdsAscend() {
    // 3 batches (8192 rows each, the last one shorter) into fragments of 7,000 rows: the
    // fragment boundaries fall inside batches. Ids descend in the first part and jump around,
    // so a range that ignored the fragment boundaries would show.
    int n = 2 * FragmentShipping.BATCH_ROWS + 5000;
    long[] ids = new long[n];
    for (int i = 0; i < n; i++) {
      ids[i] = i < FragmentShipping.BATCH_ROWS ? 1_000_000L - i : 5_000_000L + i;
    }
    FragmentShipping.Written w = FragmentShipping.writeRows(LanceLocation.of(uri, Map.of()), allocator,
        LanceFixtures.VIEW_SCHEMA, rows(ids), 7000, null, 0);
    assertEquals(n, w.rows());
    assertEquals(List.of(7000L, 7000L, 7000L, (long) n - 21000),
        w.fragments().stream().map(FragmentMetadata::getPhysicalRows).toList());
    ViewCommit.builder(uri, version()).addFragments(w.fragments(), w.ranges()).build().commit();
    Map<Integer, long[]> actual = actualRanges();
    Map<Integer, FragmentSourceRanges.Entry> rec = recorded();
    assertEquals(4, rec.size());
    for (Map.Entry<Integer, FragmentSourceRanges.Entry> e : rec.entrySet()) {
      long[] a = actual.get(e.getKey());
      assertTrue(e.getValue().min() <= a[0] && a[1] <= e.getValue().max(),
          "fragment " + e.getKey() + " holds " + a[0] + ".." + a[1] + ", recorded " + e);
    }
    // exactly each fragment's rows; only those whose ids never decrease are indexed
    List<Integer> frags = new ArrayList<>(rec.keySet());
    assertEquals(new FragmentSourceRanges.Entry(1_000_000L - 6999, 1_000_000L,
        rec.get(frags.get(0)).fileTag(), false), rec.get(frags.get(0)));
    assertEquals(new FragmentSourceRanges.Entry(1_000_000L - FragmentShipping.BATCH_ROWS + 1,
        5_000_000L + 13_999, rec.get(frags.get(1)).fileTag(), false), rec.get(frags.get(1)));
    assertEquals(new FragmentSourceRanges.Entry(5_000_000L + 14_000, 5_000_000L + 20_999,
        rec.get(frags.get(2)).fileTag(), true), rec.get(frags.get(2)));
    assertTrue(rec.get(frags.get(3)).indexed());
    assertTrue(rawValue().contains(":i"), rawValue());
    // without a range column nothing is tracked
    assertNull(FragmentShipping.writeRows(LanceLocation.of(uri, Map.of()), allocator, LanceFixtures.VIEW_SCHEMA,
        rows(new long[] {1, 2}), 0, null).ranges());
  }
}
