package io.lancerest.spark.mv.query;

import io.lancerest.spark.mv.rowindex.FragmentSourceRanges;
import java.util.List;
import org.lance.FragmentMetadata;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * What the write phase of a refresh wrote, together: uncommitted fragments for the commit.
 *
 * @param rows rows written
 * @param kept source row ids found already in the view and unchanged ({@code null} when the
 *     write was not asked to keep any)
 * @param ranges the source row id range of each fragment ({@code null} entries when unknown)
 */
record WrittenFragments(List<FragmentMetadata> fragments, long rows, Roaring64NavigableMap kept,
    List<FragmentSourceRanges.Range> ranges) {}
