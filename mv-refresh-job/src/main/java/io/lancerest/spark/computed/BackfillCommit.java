package io.lancerest.spark.computed;

import io.lancerest.spark.connector.LanceLocation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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

  /** Commits {@code results}' files; returns the version after the last commit. */
  static long commit(LanceLocation location, long readVersion, int fieldId,
      List<FragmentResult> results, BackfillCheckpoint checkpoint, String where) {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = location.open(a, null)) {
      Dataset current = ds;
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
          current = rewriteColumn(current, rewrite, fieldId, where, opened);
        }
        List<Long> done = new ArrayList<>();
        for (FragmentResult r : results) {
          if (r.complete()) {
            done.add((long) r.fragmentId());
          }
        }
        if (!done.isEmpty()) {
          current.updateConfig(checkpoint.with(done));
        }
        return current.latestVersion();
      } finally {
        for (Dataset d : opened) {
          d.close();
        }
      }
    }
  }

  private static Dataset rewriteColumn(Dataset ds, List<FragmentResult> rewrite, int fieldId,
      String where, List<Dataset> opened) {
    RuntimeException last = null;
    Dataset current = ds;
    for (int attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      Map<Integer, FragmentMetadata> latest = fragments(current);
      List<FragmentMetadata> updated = new ArrayList<>();
      for (FragmentResult r : rewrite) {
        FragmentMetadata m = latest.get(r.fragmentId());
        if (m != null) {
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
