package io.lancerest.spark.connector.read;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import io.lancerest.testing.LanceStates;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

/**
 * The decoded row-id sequence gives, for every live row, the row id lance-core itself gives, in
 * every form lance-core writes: checked on fragments small enough for lance-core's own
 * quadratic {@code _rowid} to be quick.
 */
class RowIdSequenceTest {
  @TempDir Path dir;

  @Test
  void aFreshFragmentIsOnePlainRange() {
    String uri = dir.resolve("fresh.lance").toString();
    LanceStates.write(uri, 0, 3000, true, true);
    LanceStates.write(uri, 3000, 3500, true, false);
    List<FragmentMetadata> fs = fragments(uri);
    RowIdSequence second = RowIdSequence.parse(fs.get(1).getRowIdMeta().getMetadata());
    assertTrue(second.plainRanges());
    assertEquals(500, second.length());
    assertEquals(3000, second.rowIdAt(0));
    assertEquals(3499, second.rowIdAt(499));
    assertEquals(FragmentHazard.NONE, FragmentHazard.of(fs.get(1)));
    assertSameAsLance(uri);
  }

  @Test
  void deletionsKeepThePlainRangeButAreAHazard() {
    String uri = LanceStates.withDeletions(dir.resolve("del.lance").toString(), 3000);
    FragmentMetadata f = fragments(uri).get(0);
    assertTrue(RowIdSequence.parse(f.getRowIdMeta().getMetadata()).plainRanges());
    assertEquals(FragmentHazard.DELETIONS, FragmentHazard.of(f));
    assertSameAsLance(uri);
  }

  @Test
  void aCompactionDroppingAFewRowsLeavesHoles() {
    String uri = LanceStates.rewritten(dir.resolve("holes.lance").toString(), 3000);
    FragmentMetadata f = fragments(uri).get(0);
    RowIdSequence s = RowIdSequence.parse(f.getRowIdMeta().getMetadata());
    assertFalse(s.plainRanges());
    assertEquals(List.of("range_with_holes"), s.forms());
    assertEquals(2997, s.length());
    assertEquals(8, s.rowIdAt(7), "id 7 was dropped: offset 7 holds row id 8");
    assertEquals(FragmentHazard.REWRITTEN_ROW_IDS, FragmentHazard.of(f));
    assertSameAsLance(uri);
  }

  @Test
  void aCompactionDroppingManyRowsGivesABitmapOrAnArray() {
    // 40 % gone: lance-core stores the survivors as a bitmap; 98 % gone: as a sorted array
    Map<String, String> forms = Map.of("id % 5 < 2", "range_with_bitmap",
        "id % 50 = 3", "sorted_array");
    for (String keep : forms.keySet()) {
      String uri = dir.resolve("sparse" + keep.length() + keep.charAt(keep.length() - 1)
          + ".lance").toString();
      LanceStates.write(uri, 0, 4000, true, true);
      LanceStates.delete(uri, "NOT (" + keep + ")");
      LanceStates.compactDroppingDeletions(uri);
      FragmentMetadata f = fragments(uri).get(0);
      assertEquals(FragmentHazard.REWRITTEN_ROW_IDS, FragmentHazard.of(f), keep);
      assertEquals(List.of(forms.get(keep)),
          RowIdSequence.parse(f.getRowIdMeta().getMetadata()).forms(), keep);
      assertSameAsLance(uri);
    }
  }

  @Test
  void compactingSeveralFragmentsGivesTheirIdsInOrder() {
    String uri = dir.resolve("multi.lance").toString();
    LanceStates.write(uri, 0, 1000, true, true);
    LanceStates.write(uri, 1000, 2000, true, false);
    LanceStates.write(uri, 2000, 3000, true, false);
    LanceStates.delete(uri, "id >= 1000 AND id < 2000"); // the middle fragment goes
    LanceStates.delete(uri, "id % 100 = 1");
    LanceStates.compactDroppingDeletions(uri);
    assertEquals(1, fragments(uri).size());
    assertSameAsLance(uri);
  }

  @Test
  void everyEncodedArrayWidthAndAnUnsortedArrayDecode() {
    // array = 5 of u16 (base 100, offsets 3, 1, 2), then sorted_array = 4 of u32 (base 7,
    // offsets 0, 70000), then sorted_array of u64 (values 5, 2^40), then a range [10, 12)
    List<Integer> seq = new ArrayList<>();
    segment(seq, 5, encoded(1, 100, le(2, 3, 1, 2)));
    segment(seq, 4, encoded(2, 7, le(4, 0, 70000)));
    segment(seq, 4, encoded(3, -1, le(8, 5, 1L << 40)));
    segment(seq, 1, range(10, 12));
    RowIdSequence s = RowIdSequence.parse(inline(seq));
    assertArrayEquals(new long[] {103, 101, 102, 7, 70007, 5, 1L << 40, 10, 11}, s.toArray());
    assertEquals(70007, s.rowIdAt(4));
    assertEquals(List.of("array", "sorted_array", "range"), s.forms());
    assertFalse(s.plainRanges());
    assertThrows(IndexOutOfBoundsException.class, () -> s.rowIdAt(9));
  }

  @Test
  void runsJoinConsecutiveIdsAndKeepPhysicalOrder() {
    // {range [5, 10)}, {range [20, 30)}
    RowIdSequence two = RowIdSequence.parse(
        "{\"Inline\":[10,6,10,4,8,5,16,10,10,6,10,4,8,20,16,30]}");
    assertEquals(List.of("5-10", "20-30"), runs(two));
    assertTrue(two.plainRanges());
    // {range [0, 1000000)}
    assertEquals(List.of("0-1000000"), runs(RowIdSequence.parse(
        "{\"Inline\":[10,6,10,4,16,192,132,61]}")));
    List<Integer> seq = new ArrayList<>();
    segment(seq, 5, encoded(1, 100, le(2, 3, 4, 5, 1, 2)));
    assertEquals(List.of("103-106", "101-103"), runs(RowIdSequence.parse(inline(seq))));
  }

  private static List<String> runs(RowIdSequence s) {
    return s.runs().stream().map(r -> r[0] + "-" + r[1]).toList();
  }

  @Test
  void whatItCannotReadIsNullAndCountsAsRewritten() {
    assertNull(RowIdSequence.parse("{\"External\":{\"path\":\"x\",\"offset\":0,\"size\":9}}"));
    assertNull(RowIdSequence.parse("{\"Inline\":[10,6,10,4,16]}"), "truncated");
    assertNull(RowIdSequence.parse("{\"Inline\":[10,2,50,0]}"), "unknown segment kind");
    assertNull(RowIdSequence.parse("{\"Inline\":[300]}"));
    assertNull(RowIdSequence.parse("{\"Inline\":[10,6,18,4,16,192,132,61]}"),
        "a range with holes without its holes");
    assertNull(RowIdSequence.parse(null));
    assertEquals(0, RowIdSequence.parse("{\"Inline\":[]}").length());
  }

  // ------------------------------------------------------------------ helpers

  /** Every live row: the decoded id at its physical offset is lance-core's {@code _rowid}. */
  private static void assertSameAsLance(String uri) {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a)) {
      long rows = 0;
      for (Fragment f : ds.getFragments()) {
        RowIdSequence s = RowIdSequence.parse(f.metadata().getRowIdMeta().getMetadata());
        assertEquals(f.metadata().getPhysicalRows(), s.length(), "one id per physical row");
        try (LanceScanner sc = f.newScan(new ScanOptions.Builder()
                .columns(List.of("_rowid", "_rowaddr")).build());
            ArrowReader r = sc.scanBatches()) {
          while (r.loadNextBatch()) {
            VectorSchemaRoot root = r.getVectorSchemaRoot();
            FieldVector id = root.getVector("_rowid");
            FieldVector addr = root.getVector("_rowaddr");
            for (int i = 0; i < root.getRowCount(); i++) {
              long offset = ((Number) addr.getObject(i)).longValue() & 0xffffffffL;
              assertEquals(((Number) id.getObject(i)).longValue(), s.rowIdAt(offset), "row at offset " + offset + " of "
                  + "fragment " + f.getId());
              rows++;
            }
          }
        }
      }
      assertEquals(ds.countRows(), rows);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static List<FragmentMetadata> fragments(String uri) {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a)) {
      return ds.getFragments().stream().map(Fragment::metadata).toList();
    }
  }

  private static List<Integer> range(long start, long end) {
    List<Integer> b = new ArrayList<>();
    b.add(1 << 3);
    varint(b, start);
    b.add(2 << 3);
    varint(b, end);
    return b;
  }

  /** An EncodedU64Array of kind 1 (u16), 2 (u32) or 3 (u64); base < 0: none. */
  private static List<Integer> encoded(int kind, long base, List<Integer> bytes) {
    List<Integer> body = new ArrayList<>();
    if (base >= 0) {
      body.add(1 << 3);
      varint(body, base);
    }
    body.add((2 << 3) | 2);
    varint(body, bytes.size());
    body.addAll(bytes);
    List<Integer> out = new ArrayList<>();
    out.add((kind << 3) | 2);
    varint(out, body.size());
    out.addAll(body);
    return out;
  }

  private static List<Integer> le(int width, long... values) {
    List<Integer> out = new ArrayList<>();
    for (long v : values) {
      for (int k = 0; k < width; k++) {
        out.add((int) ((v >>> (8 * k)) & 0xff));
      }
    }
    return out;
  }

  private static void segment(List<Integer> seq, int kind, List<Integer> body) {
    List<Integer> seg = new ArrayList<>();
    seg.add((kind << 3) | 2);
    varint(seg, body.size());
    seg.addAll(body);
    seq.add((1 << 3) | 2);
    varint(seq, seg.size());
    seq.addAll(seg);
  }

  private static void varint(List<Integer> out, long v) {
    while ((v & ~0x7fL) != 0) {
      out.add((int) ((v & 0x7f) | 0x80));
      v >>>= 7;
    }
    out.add((int) v);
  }

  private static String inline(List<Integer> bytes) {
    StringJoiner j = new StringJoiner(",", "{\"Inline\":[", "]}");
    bytes.forEach(b -> j.add(String.valueOf(b)));
    return j.toString();
  }
}
