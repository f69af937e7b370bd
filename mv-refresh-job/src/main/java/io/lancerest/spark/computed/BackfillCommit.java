package io.lancerest.spark.computed;

import io.lancerest.spark.connector.LanceLocation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.Transaction;
import org.lance.fragment.DataFile;
import org.lance.operation.DataReplacement;
import org.lance.operation.Update;
import org.lance.operation.UpdateConfig;

/**
 * Commits the column files of a group of fragments, then records them as done.
 *
 * <p>A fragment whose column has no file yet, or one of its own, gets its file through a {@code
 * DataReplacement}, which leaves the other columns' files alone and survives a concurrent delete.
 * A fragment whose column sits in a file with other columns (rows appended with the column, or
 * rewritten by an UPDATE) gets an {@code Update} that rewrites the column only: the new file is
 * added and the column is marked dropped ({@code -2}) in the old one. lance-core refuses that
 * Update after a concurrent delete on the fragment, so it is rebuilt from the latest metadata
 * and committed again. The checkpoint is a separate commit right after (a transaction holds one
 * operation): a crash in between costs those fragments a recomputation, never a wrong value.
 */
final class BackfillCommit {
  private static final int UPDATE_ATTEMPTS = 5;

  private BackfillCommit() {}

  /** What a group's commits left: the version after them, and the checkpoint they recorded. */
  record Committed(long version, BackfillCheckpoint checkpoint, Set<Integer> committed) {}

  /**
   * Commits {@code results}' files (computed for {@code tasks}) and records the complete ones as
   * done, merged into the checkpoint the table holds by then.
   */
  static Committed commit(LanceLocation location, int fieldId, List<FragmentTask> tasks,
      List<FragmentResult> results, BackfillCheckpoint checkpoint, String where) {
    Map<Integer, FragmentTask> byId = new HashMap<>();
    tasks.forEach(t -> byId.put(t.fragmentId(), t));
    try (BufferAllocator a = new RootAllocator(); Dataset ds = location.open(a, null)) {
      Dataset current = ds;
      if (!checkpoint.describes(current)) {
        // dropped and added again, or redefined, since the read: these values are not its
        return new Committed(current.version(), checkpoint, Set.of());
      }
      List<DataReplacement.DataReplacementGroup> replace = new ArrayList<>();
      List<FragmentResult> rewrite = new ArrayList<>();
      Map<Integer, FragmentMetadata> latest = fragments(current);
      for (FragmentResult r : results) {
        if (r.file() == null) {
          continue;
        }
        FragmentMetadata m = latest.get(r.fragmentId());
        if (m == null) {
          continue; // gone since the read version (compacted or deleted): nothing to fill
        }
        if (!unchanged(m, byId.get(r.fragmentId()), fieldId)) {
          continue; // left for the next backfill
        }
        if (sharesFile(m, fieldId)) {
          rewrite.add(r);
        } else {
          replace.add(new DataReplacement.DataReplacementGroup(r.fragmentId(), r.file()));
        }
      }
      List<Dataset> opened = new ArrayList<>();
      try {
        if (!replace.isEmpty()) {
          current = new CommitBuilder(current).execute(new Transaction.Builder()
              .readVersion(current.version())
              .operation(DataReplacement.builder().replacements(replace).build()).build());
          opened.add(current);
        }
        if (!rewrite.isEmpty()) {
          current = rewriteColumn(current, rewrite, byId, fieldId, where, opened);
        }
        // committed: the fragment holds this backfill's file for the column now; done: that,
        // and complete. Checked on the latest version, just before the checkpoint lands on it,
        // so that another backfill's file committed meanwhile is not recorded as done.
        try (Dataset newest = location.open(a, null)) {
          Map<Integer, FragmentMetadata> now = fragments(newest);
          Set<Integer> committed = new HashSet<>();
          List<Long> done = new ArrayList<>();
          for (FragmentResult r : results) {
            FragmentMetadata m = now.get(r.fragmentId());
            if (r.file() != null && m != null
                && r.file().getPath().equals(FragmentTask.columnFile(m, fieldId))) {
              committed.add(r.fragmentId());
              if (r.complete()) {
                done.add((long) r.fragmentId());
              }
            }
          }
          if (!checkpoint.describes(newest)) {
            done.clear(); // never recorded over a checkpoint of another column of the name
          }
          return record(newest, checkpoint, committed, done, opened);
        }
      } finally {
        for (Dataset d : opened) {
          d.close();
        }
      }
    }
  }

  /** The checkpoint upsert of {@code done}, merged with the stored one, on {@code current}. */
  private static Committed record(Dataset current, BackfillCheckpoint checkpoint,
      Set<Integer> committed, List<Long> done, List<Dataset> opened) {
    BackfillCheckpoint recorded = checkpoint;
    if (!done.isEmpty()) {
      // merged with what the table holds now (another backfill of the column may have
      // recorded fragments since), and written as an upsert of this column's keys:
      // lance-core 4.0.0's Dataset.updateConfig replaces the whole config, which would drop
      // the table's properties and the other columns' checkpoints
      BackfillCheckpoint stored = BackfillCheckpoint.read(current.getConfig(),
          checkpoint.column(), checkpoint.udfSha(), checkpoint.fieldId());
      TreeSet<Long> all = new TreeSet<>(checkpoint.done());
      all.addAll(stored.done());
      all.addAll(done);
      recorded = new BackfillCheckpoint(checkpoint.column(), checkpoint.udfSha(),
          checkpoint.fieldId(), all);
      try (Transaction t = new Transaction.Builder().readVersion(current.version())
          .operation(UpdateConfig.builder().upsertValues(recorded.with(List.of())).build())
          .build()) {
        current = new CommitBuilder(current).execute(t);
        opened.add(current);
      }
    }
    return new Committed(current.latestVersion(), recorded, committed);
  }

  private static Dataset rewriteColumn(Dataset ds, List<FragmentResult> rewrite,
      Map<Integer, FragmentTask> byId, int fieldId, String where, List<Dataset> opened) {
    RuntimeException last = null;
    Dataset current = ds;
    for (int attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      Map<Integer, FragmentMetadata> latest = fragments(current);
      List<FragmentMetadata> updated = new ArrayList<>();
      for (FragmentResult r : rewrite) {
        FragmentMetadata m = latest.get(r.fragmentId());
        if (m != null && unchanged(m, byId.get(r.fragmentId()), fieldId)) {
          updated.add(withColumnFile(m, r.file(), fieldId));
        }
      }
      if (updated.isEmpty()) {
        return current;
      }
      try {
        Dataset next = new CommitBuilder(current).execute(new Transaction.Builder()
            .readVersion(current.version())
            .operation(Update.builder().updatedFragments(updated)
                .fieldsModified(new long[] {fieldId})
                .updateMode(Optional.of(Update.UpdateMode.RewriteColumns)).build()).build());
        opened.add(next);
        return next;
      } catch (RuntimeException e) {
        if (e.getMessage() == null || !e.getMessage().contains("Retryable commit conflict")) {
          throw e;
        }
        last = e;
        current = current.checkoutVersion(current.latestVersion());
        opened.add(current);
      }
    }
    throw new ComputedColumnException(where + ": the column of " + rewrite.size()
        + " rewritten fragment(s) could not be committed after " + UPDATE_ATTEMPTS
        + " attempts: other commits kept conflicting (" + last.getMessage() + "). Backfill "
        + "again: the fragments committed so far are kept.", last);
  }

  /**
   * Whether fragment {@code m}, as the table has it now, is still the one {@code task} read: the
   * same physical rows (lance-core does not check a file's rows against its fragment's, and a
   * file of another length would make the fragment unreadable) and the same file holding the
   * column (else the column was written since, by another backfill, and the values read before
   * must not replace it). A fragment that changed is left for the next backfill.
   */
  static boolean unchanged(FragmentMetadata m, FragmentTask task, int fieldId) {
    return task != null && m.getPhysicalRows() == task.physicalRows()
        && java.util.Objects.equals(FragmentTask.columnFile(m, fieldId), task.columnFile());
  }

  /** Whether the column is stored in a file that also holds other columns. */
  static boolean sharesFile(FragmentMetadata m, int fieldId) {
    for (DataFile f : m.getFiles()) {
      int[] fields = f.getFields();
      boolean has = false;
      for (int id : fields) {
        has |= id == fieldId;
      }
      if (has && fields.length > 1) {
        return true;
      }
    }
    return false;
  }

  private static FragmentMetadata withColumnFile(FragmentMetadata m, DataFile file, int fieldId) {
    List<DataFile> files = new ArrayList<>();
    for (DataFile f : m.getFiles()) {
      int[] fields = f.getFields().clone();
      boolean only = fields.length == 1 && fields[0] == fieldId;
      if (only) {
        continue;
      }
      for (int i = 0; i < fields.length; i++) {
        if (fields[i] == fieldId) {
          fields[i] = -2; // lance-core's mark for a column rewritten elsewhere
        }
      }
      files.add(new DataFile(f.getPath(), fields, f.getColumnIndices(), f.getFileMajorVersion(),
          f.getFileMinorVersion(), f.getFileSizeBytes(), f.getBaseId().orElse(null)));
    }
    files.add(file);
    return new FragmentMetadata(m.getId(), files, m.getPhysicalRows(), m.getDeletionFile(),
        m.getRowIdMeta());
  }

  static Map<Integer, FragmentMetadata> fragments(Dataset ds) {
    Map<Integer, FragmentMetadata> m = new java.util.HashMap<>();
    for (Fragment f : ds.getFragments()) {
      m.put(f.getId(), f.metadata());
    }
    return m;
  }
}
