package io.lancerest.spark.mv.result;

import io.lancerest.spark.mv.definition.MaterializedViewKind;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a refresh would do, worked out from the view and its source without writing or
 * committing anything: the answer of {@code EXPLAIN REFRESH MATERIALIZED VIEW}.
 *
 * @param view the view's name as shown to users
 * @param mode what the refresh would do
 * @param reason why, in words (for example "source replaced", "force", "LIMIT view")
 * @param fromVersion the source version the view reflects now ({@code null}: none yet)
 * @param toVersion the source version the refresh would reflect
 * @param sourceFragments the source's fragments at {@code toVersion}
 * @param fragmentsToRead the fragments it would read, or {@code null} for every fragment
 * @param rowsToRead the source rows it would read (physical rows of those fragments)
 * @param viewRows the view's rows now
 * @param viewRowsToDelete view rows it would delete ({@code null}: unknown)
 * @param rowsToWrite view rows it would write ({@code null}: unknown, see {@code note})
 * @param write where the rows would be written
 * @param tasks Spark tasks of the write, when {@code write} is {@link Write#SPARK_JOB}
 * @param note what is estimated or not known, and why (may be empty)
 * @param indexes what the refresh would do to each index of the view, one line each
 */
public record RefreshPlan(String view, MaterializedViewKind kind, Mode mode, String reason,
    Long fromVersion, long toVersion, int sourceFragments, List<Integer> fragmentsToRead,
    long rowsToRead, long viewRows, Long viewRowsToDelete, Long rowsToWrite, Write write,
    Integer tasks, String note, List<String> indexes) {

  public RefreshPlan {
    fragmentsToRead = fragmentsToRead == null ? null : List.copyOf(fragmentsToRead);
    note = note == null ? "" : note;
    indexes = indexes == null ? List.of() : List.copyOf(indexes);
  }

  /** A plan whose index lines are not filled in yet ({@link #withIndexes}). */
  public RefreshPlan(String view, MaterializedViewKind kind, Mode mode, String reason,
      Long fromVersion, long toVersion, int sourceFragments, List<Integer> fragmentsToRead,
      long rowsToRead, long viewRows, Long viewRowsToDelete, Long rowsToWrite, Write write,
      Integer tasks, String note) {
    this(view, kind, mode, reason, fromVersion, toVersion, sourceFragments, fragmentsToRead,
        rowsToRead, viewRows, viewRowsToDelete, rowsToWrite, write, tasks, note, List.of());
  }

  /** This plan with the lines saying what the refresh would do to each index. */
  public RefreshPlan withIndexes(List<String> lines) {
    return new RefreshPlan(view, kind, mode, reason, fromVersion, toVersion, sourceFragments,
        fragmentsToRead, rowsToRead, viewRows, viewRowsToDelete, rowsToWrite, write, tasks, note,
        lines);
  }

  /** What a refresh does. */
  public enum Mode {
    /** Nothing: the view already reflects the source version; no commit. */
    NO_OP,
    /** Only what changed since the view's source version is read and applied. */
    INCREMENTAL,
    /** The view is rebuilt from the whole source. */
    FULL;

    public String wire() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  /** Where the new rows are computed and written. */
  public enum Write {
    NONE("nothing to write"),
    DRIVER("on the driver, no Spark job"),
    SPARK_JOB("Spark job");

    private final String text;

    Write(String text) {
      this.text = text;
    }
  }

  /** The change of the view's row count, or {@code null} when not known. */
  public Long expectedRowChange() {
    if (mode == Mode.NO_OP) {
      return 0L;
    }
    return rowsToWrite == null || viewRowsToDelete == null ? null
        : rowsToWrite - viewRowsToDelete;
  }

  /** {@code name → value} lines, in the order users read them. */
  public List<String[]> lines() {
    List<String[]> out = new ArrayList<>();
    out.add(new String[] {"View", view});
    out.add(new String[] {"Kind", kind.wire()});
    out.add(new String[] {"Mode", mode.wire()});
    out.add(new String[] {"Reason", reason});
    out.add(new String[] {"Source versions", (fromVersion == null ? "none" : fromVersion)
        + " -> " + toVersion});
    out.add(new String[] {"Source fragments to read", mode == Mode.NO_OP ? "none"
        : fragmentsToRead == null ? "all " + sourceFragments
        : fragmentsToRead.size() + " of " + sourceFragments + " " + fragmentsToRead});
    out.add(new String[] {"Source rows to read", String.valueOf(mode == Mode.NO_OP ? 0
        : rowsToRead)});
    out.add(new String[] {"View rows now", String.valueOf(viewRows)});
    out.add(new String[] {"View rows to delete", viewRowsToDelete == null ? "unknown"
        : String.valueOf(viewRowsToDelete)});
    out.add(new String[] {"View rows to write", rowsToWrite == null ? "unknown"
        : String.valueOf(rowsToWrite)});
    Long change = expectedRowChange();
    out.add(new String[] {"Expected view row change", change == null ? "unknown"
        : (change > 0 ? "+" : "") + change});
    out.add(new String[] {"Write", write.text + (write == Write.SPARK_JOB && tasks != null
        ? ", " + tasks + (tasks == 1 ? " task" : " tasks") : "")});
    out.add(new String[] {"Commit", mode == Mode.NO_OP ? "none" : "one commit to the view"
        + (indexes.isEmpty() ? "" : ", then one to register its indexes again"
        + (rowsToWrite != null && rowsToWrite == 0 ? "" : " and one per index that takes "
        + "new rows in"))});
    for (String line : indexes) {
      out.add(new String[] {"Index", line});
    }
    if (!note.isEmpty()) {
      out.add(new String[] {"Note", note});
    }
    return out;
  }
}
