package io.lancerest.spark.connector.read;

import org.lance.FragmentMetadata;
import org.lance.fragment.RowIdMeta;

/**
 * What lance-core 4.0.0 cannot scan of a fragment in time linear in its rows.
 *
 * <p>With stable row ids, lance-core finds a row id's position ({@code U64Segment.position}) and
 * the id at a position ({@code U64Segment.get}) by walking the segment from its start for every
 * form but a plain range. Two fragment states make it do that once per row, so that a scan of a
 * million-row fragment runs for hours (figures in docs/lance-core-scan-defect.md):
 * <ul>
 *   <li>{@link #DELETIONS}: a deletion file. The row-id index lance-core builds for the dataset
 *       then holds the fragment's live ids as a range with holes, and a filtered scan fetches
 *       every column not in the filter that it reads late (strings, binary, lists, and fixed-width
 *       values of 10 bytes or more on local storage) by row id through that index. Asking for
 *       {@code _rowaddr} makes it fetch by address instead.
 *   <li>{@link #REWRITTEN_ROW_IDS}: a row-id sequence that is not plain ranges (a compaction that
 *       dropped deleted rows leaves a range with holes or a bitmap; other writers leave arrays).
 *       Every filtered scan and every read of {@code _rowid} then computes the id of each row
 *       from that sequence, whatever else it asks for.
 * </ul>
 * Without stable row ids a row id is the row's address and nothing of this applies.
 */
public enum FragmentHazard {
  /** Any scan is linear. */
  NONE,
  /** A filtered scan must read {@code _rowaddr}. */
  DELETIONS,
  /** No filter may reach lance-core, and {@code _rowid} must not be read from it. */
  REWRITTEN_ROW_IDS;

  /** The hazard of a fragment of a dataset at some version. */
  public static FragmentHazard of(FragmentMetadata f) {
    RowIdMeta meta = f.getRowIdMeta();
    if (meta == null) {
      return NONE; // no stable row ids
    }
    RowIdSequence seq = RowIdSequence.parse(meta.getMetadata());
    if (seq == null || !seq.plainRanges()) {
      return REWRITTEN_ROW_IDS;
    }
    return f.getNumDeletions() > 0 || f.getDeletionFile() != null ? DELETIONS : NONE;
  }

  /** The worse of two hazards. */
  public FragmentHazard and(FragmentHazard other) {
    return compareTo(other) >= 0 ? this : other;
  }
}
