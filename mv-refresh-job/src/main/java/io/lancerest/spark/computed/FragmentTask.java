package io.lancerest.spark.computed;

import java.io.Serializable;

/**
 * One fragment a backfill computes.
 *
 * @param fragmentId the fragment's id at the read version
 * @param physicalRows rows in its data files, deleted ones included: the new file holds as many
 */
public record FragmentTask(int fragmentId, long physicalRows) implements Serializable {}
