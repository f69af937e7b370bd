package io.lancerest.spark.mv.commit;

import java.util.Locale;

/**
 * What one view commit did to one index of the view.
 *
 * @param name the index's name
 * @param vector whether it is a vector (IVF) index; else scalar or full-text
 * @param action what happened to it
 * @param rowsAdded rows this commit added to the index (a delta segment, a merge, a rebuild)
 * @param rowsIndexed live rows of the view the index covers after the commit
 * @param rowsUnindexed live rows it does not cover (found by a flat search until indexed)
 * @param segments the index's segments after the commit
 * @param detail why, in words (empty when nothing needs saying)
 */
public record IndexOutcome(String name, boolean vector, Action action, long rowsAdded,
    long rowsIndexed, long rowsUnindexed, int segments, String detail) {

  /** What a commit did to an index. */
  public enum Action {
    /** Carried over unchanged (no new rows to add). */
    CARRIED,
    /** Carried over, and the commit's new rows were added to it. */
    UPDATED,
    /** Built again from its recipe. */
    REBUILT,
    /** Carried over, but adding the new rows failed: they are flat-searched until indexed. */
    NOT_UPDATED,
    /**
     * Left as another commit made it meanwhile (a user's DROP INDEX or CREATE INDEX, another
     * refresh's update): the view's next refresh brings it up to date.
     */
    SKIPPED,
    /** Carried over by the Overwrite, but not registered yet: the next view commit does it. */
    PENDING,
    /** Gone: its files were removed (a cleanup) and no recipe could build it again. */
    LOST;

    public String wire() {
      return name().toLowerCase(Locale.ROOT).replace('_', ' ');
    }
  }

  public IndexOutcome {
    detail = detail == null ? "" : detail;
  }

  /** Whether a user must know (WARN): the index is not up to date or gone. */
  public boolean bad() {
    return action == Action.NOT_UPDATED || action == Action.PENDING || action == Action.LOST;
  }

  /** {@code vidx: updated, 120 rows added, 1000 of 1000 rows indexed, 3 segments}. */
  @Override
  public String toString() {
    StringBuilder s = new StringBuilder(name).append(": ").append(action.wire());
    // a pending index is not listed: it covers nothing yet, and "0 of 0" would mislead; nor is
    // one another commit dropped
    if (action != Action.LOST && action != Action.PENDING
        && !(action == Action.SKIPPED && segments == 0)) {
      if (rowsAdded > 0) {
        s.append(", ").append(rowsAdded).append(" rows added");
      }
      s.append(", ").append(rowsIndexed).append(" of ").append(rowsIndexed + rowsUnindexed)
          .append(" rows indexed");
      if (vector) {
        s.append(", ").append(segments).append(segments == 1 ? " segment" : " segments");
      }
    }
    if (!detail.isEmpty()) {
      s.append(" (").append(detail).append(')');
    }
    return s.toString();
  }
}
