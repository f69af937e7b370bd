package io.lancerest.spark.computed;

import io.lancerest.spark.connector.LanceLocation;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Field;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.schema.LanceField;

/**
 * Fills a computed column: plans the fragments of the table at the read version that the
 * checkpoint does not record as done, has a {@link FragmentRunner} compute them, and commits
 * {@code commit_granularity} fragments at a time, each commit followed by its checkpoint, so that
 * a failed or killed backfill resumes with the fragments not yet committed.
 */
public final class Backfill {
  private Backfill() {}

  /**
   * Backfills {@code column}.
   *
   * @param table the table's name as users write it, for messages
   * @param condition compiles the options' {@code where} against the table's schema ({@code
   *     null} when there is none); its refusal is the caller's to word
   */
  public static BackfillResult run(String table, LanceLocation location, String column,
      BackfillOptions options, Function<org.apache.arrow.vector.types.pojo.Schema, RowCondition>
          condition, FragmentRunner runner) {
    String where = "Backfill of column '" + column + "' of table " + table;
    BackfillTaskSpec spec;
    List<FragmentTask> todo = new ArrayList<>();
    long alreadyDone = 0;
    Set<Integer> atRead = new HashSet<>();
    BackfillCheckpoint checkpoint;
    try (BufferAllocator a = new RootAllocator(); Dataset latest = location.open(a, null)) {
      long readVersion = options.readVersion() != null ? options.readVersion()
          : latest.version();
      try (Dataset ds = readVersion == latest.version() ? null
          : location.open(a, readVersion)) {
        Dataset at = ds != null ? ds : latest;
        Field f = at.getSchema().getFields().stream().filter(x -> x.getName().equals(column))
            .findFirst().orElse(null);
        if (f == null) {
          throw new ComputedColumnException(where + ": the table has no column '" + column
              + "'" + (options.readVersion() != null ? " at version " + readVersion : "")
              + ". Add it with ALTER TABLE ... ADD COLUMN ... COMPUTED BY first.");
        }
        ComputedColumn def = ComputedColumn.fromMetadata(table, column, f.getMetadata());
        if (def == null) {
          throw new ComputedColumnException(where + ": column '" + column + "' is not a "
              + "computed column (its field metadata has no '" + ComputedColumn.METADATA_KEY
              + "'); only computed columns can be backfilled.");
        }
        requireStoredInputs(at, def, where);
        int fieldId = fieldId(at, column);
        checkpoint = BackfillCheckpoint.read(latest.getConfig(), column,
            def.function().sha256Hex(), fieldId);
        // values computed at an older read_version for a column dropped and added again, or
        // redefined, since would land in the latest column
        if (ds != null && !checkpoint.describes(latest)) {
          throw new ComputedColumnException(where + ": at read_version " + readVersion + " the "
              + "column is not the one the table has now (it was dropped, added again or "
              + "redefined since). Backfill without read_version, or with a version from after "
              + "that change.");
        }
        RowCondition cond = options.where() == null ? null : condition.apply(at.getSchema());
        spec = new BackfillTaskSpec(table, location.uri(), location.storageOptions(),
            readVersion, column, def.toMetadataValue(), fieldId, options, cond);
        for (Fragment fr : at.getFragments()) {
          FragmentMetadata m = fr.metadata();
          atRead.add(m.getId());
          if (checkpoint.isDone(m)) {
            alreadyDone++;
          } else if (m.getPhysicalRows() > m.getNumDeletions()) {
            todo.add(new FragmentTask(m.getId(), m.getPhysicalRows(),
                FragmentTask.columnFile(m, fieldId)));
          }
        }
      }
    }
    if (!todo.isEmpty()) {
      OutputProbe.check(spec, ComputedColumn.fromMetadata(table, column, java.util.Map.of(
          ComputedColumn.METADATA_KEY, spec.definition())), todo.get(0), where);
    }
    long computedFragments = 0;
    long changedRows = 0;
    long rows = 0;
    long skipped = 0;
    long committed = spec.readVersion();
    for (int i = 0; i < todo.size(); i += options.commitGranularity()) {
      List<FragmentTask> group = todo.subList(i, Math.min(todo.size(),
          i + options.commitGranularity()));
      List<FragmentResult> results = runner.run(spec, group);
      boolean any = results.stream().anyMatch(r -> r.file() != null || r.complete());
      java.util.Set<Integer> landed = java.util.Set.of();
      if (any) {
        try {
          BackfillCommit.Committed c = BackfillCommit.commit(location, spec.fieldId(), group,
              results, checkpoint, where);
          committed = c.version();
          checkpoint = c.checkpoint();
          landed = c.committed();
        } catch (ComputedColumnException e) {
          throw e;
        } catch (RuntimeException e) { // a conflict with another writer, storage
          throw new ComputedColumnException(where + ": committing fragments "
              + group.stream().map(FragmentTask::fragmentId).toList() + " failed: "
              + e.getMessage() + ". Fragments committed before are kept; backfill again to "
              + "compute the rest.", e);
        }
      }
      // only what landed counts: a fragment that changed since the read is left for later
      for (FragmentResult r : results) {
        if (landed.contains(r.fragmentId())) {
          computedFragments++;
          rows += r.rowsComputed();
          skipped += r.rowsSkipped();
        } else if (r.file() != null) {
          changedRows += r.rowsComputed() + r.rowsSkipped();
        }
      }
    }
    long later = changedRows;
    try (BufferAllocator a = new RootAllocator(); Dataset latest = location.open(a, null)) {
      for (Fragment fr : latest.getFragments()) {
        FragmentMetadata m = fr.metadata();
        if (!atRead.contains(m.getId()) && !checkpoint.isDone(m.getId())) {
          later += m.getPhysicalRows() - m.getNumDeletions();
        }
      }
    }
    return new BackfillResult(computedFragments, alreadyDone, rows, skipped, later,
        spec.readVersion(), committed);
  }

  /**
   * Refuses a column computed from a computed column (one added before such columns were
   * refused): a backfill rewrites its input in place, unseen by this column's checkpoint.
   */
  private static void requireStoredInputs(Dataset ds, ComputedColumn def, String where) {
    for (String in : def.inputColumns()) {
      Field f = ds.getSchema().getFields().stream().filter(x -> x.getName().equals(in))
          .findFirst().orElse(null);
      if (f != null && f.getMetadata().containsKey(ComputedColumn.METADATA_KEY)) {
        throw new ComputedColumnException(where + ": its input column '" + in + "' is itself a "
            + "computed column, whose backfills this column would not notice. Drop this column "
            + "and add it again computed from the columns '" + in + "' is computed from.");
      }
    }
  }

  private static int fieldId(Dataset ds, String column) {
    for (LanceField f : ds.getLanceSchema().fields()) {
      if (f.getName().equals(column)) {
        return f.getId();
      }
    }
    throw new IllegalStateException("column " + column + " not in the Lance schema");
  }
}
