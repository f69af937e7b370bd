package io.lancerest.spark.computed;

import java.io.Serializable;

/**
 * One fragment a backfill computes.
 *
 * @param fragmentId the fragment's id at the read version
 * @param physicalRows rows in its data files, deleted ones included: the new file holds as many
 * @param columnFile the path of the data file holding the column at the read version, or {@code
 *     null} when none does (all NULL): the commit checks the fragment still has it, so that a
 *     column written since (by another backfill) is never replaced by values read before it
 */
public record FragmentTask(int fragmentId, long physicalRows, String columnFile)
    implements Serializable {
  /** The path of {@code m}'s data file holding field {@code fieldId}, or {@code null}. */
  public static String columnFile(org.lance.FragmentMetadata m, int fieldId) {
    for (org.lance.fragment.DataFile f : m.getFiles()) {
      for (int id : f.getFields()) {
        if (id == fieldId) {
          return f.getPath();
        }
      }
    }
    return null;
  }
}
