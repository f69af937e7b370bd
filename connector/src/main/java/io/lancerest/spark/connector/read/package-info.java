/**
 * Reads of Lance data that lance-core 4.0.0 scans in linear time, whatever state the fragments
 * are in.
 *
 * <p>With stable row ids, lance-core 4.0.0 computes row ids in time quadratic in a fragment's
 * rows for fragments with deletions (filtered scans that fetch columns late) and for fragments a
 * compaction rewrote (filtered scans, and every read of {@code _rowid}); a scan of a
 * million-row fragment then runs for hours. {@link
 * io.lancerest.spark.connector.read.FragmentHazard} tells the states apart from the fragment
 * metadata alone, and the readers here take the route lance-core runs linearly: a fetch by row
 * address, no filter handed to lance-core (Spark evaluates it), or row ids mapped from row
 * addresses through the fragment's own row-id sequence ({@link
 * io.lancerest.spark.connector.read.RowIdSequence}). See docs/lance-core-scan-defect.md.
 */
package io.lancerest.spark.connector.read;
