package io.lancerest.spark.mv.result;

/**
 * What {@code OPTIMIZE MATERIALIZED VIEW} did to the view table: its fragments before and after
 * the compaction, and the old versions (and their bytes) it removed.
 */
public record MaintenanceResult(int fragmentsBefore, int fragmentsAfter, long versionsRemoved,
    long bytesRemoved) {}
