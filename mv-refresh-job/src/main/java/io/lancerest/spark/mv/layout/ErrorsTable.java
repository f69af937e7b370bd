package io.lancerest.spark.mv.layout;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.error.MaterializedViewException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.ReadOptions;
import org.lance.Transaction;
import org.lance.WriteParams;
import org.lance.operation.Append;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the skipped work of a chunker or UDTF refresh is recorded: a plain Lance table ({@code
 * <view>__errors} next to the view) with one row per skipped item (a chunker's parent row, a
 * UDTF's partition) per refresh, queryable like any table.
 *
 * <p>Recording is two-phase around the view commit, so that a skipped item is neither lost nor
 * recorded for a refresh that did not land:
 * <ol>
 *   <li>{@link #stage} runs <em>before</em> the view commit: it creates the table if needed and
 *       writes the rows as uncommitted fragments. If that fails, the refresh fails and commits
 *       nothing: a partial view is never committed without its errors written down.</li>
 *   <li>{@link Staged#commit()} runs <em>after</em> the view commit: one Append of those
 *       fragments (retried; appends do not conflict with each other). Should it still fail, the
 *       view has committed already, so the refresh succeeds; every entry is logged at ERROR and
 *       stays in the refresh result.</li>
 *   <li>{@link Staged#abandon} is for a refresh that fails after staging: nothing is appended,
 *       and the entries are logged at WARN, since a failed refresh's errors are otherwise only
 *       in its exception.</li>
 * </ol>
 */
public final class ErrorsTable {
  private static final Logger LOG = LoggerFactory.getLogger(ErrorsTable.class);
  private static final int COMMIT_ATTEMPTS = 3;

  /** The columns; the kind decides which of {@code __source_row_id} / partition_* are set. */
  public static final Schema SCHEMA = new Schema(List.of(
      utf8("job_id"), utf8("view"), utf8("kind"), utf8("function_name"),
      utf8("function_version"), int64("source_version", false),
      int64("__source_row_id", true), utf8("partition_column"), utf8("partition_key"),
      new Field("attempts", FieldType.notNullable(new ArrowType.Int(32, true)), null),
      utf8("error_class"), utf8("error_message"), int64("recorded_at_ms", false)));

  private ErrorsTable() {}

  /** Who wrote the entries: the refresh and its function. */
  public record Origin(String jobId, String view, MaterializedViewKind kind, String functionName,
      String functionVersion, long sourceVersion) {}

  /**
   * One skipped item.
   *
   * @param sourceRowId the skipped parent's {@code _rowid} (chunker views), else null
   * @param partitionColumn the partition column (UDTF views; null when unpartitioned)
   * @param partitionKey the partition's key as users see it (UDTF views), else null
   */
  public record Entry(Long sourceRowId, String partitionColumn, String partitionKey,
      int attempts, String errorClass, String errorMessage) {
    String describe() {
      String what = sourceRowId != null ? "source row " + sourceRowId
          : "partition " + (partitionColumn == null ? "" : partitionColumn + "=") + partitionKey;
      return what + " after " + attempts + " attempt(s): " + errorClass + ": " + errorMessage;
    }
  }

  /** {@code .../v.lance} → {@code .../v__errors.lance}; {@code .../v} → {@code .../v__errors}. */
  public static String nextTo(String viewUri) {
    String base = viewUri.endsWith("/") ? viewUri.substring(0, viewUri.length() - 1) : viewUri;
    return base.endsWith(".lance")
        ? base.substring(0, base.length() - ".lance".length()) + "__errors.lance"
        : base + "__errors";
  }

  /**
   * Phase one, before the view commit: the entries written as uncommitted fragments of the
   * errors table at {@code uri} (created if missing).
   *
   * @throws MaterializedViewException when the table cannot be created or written, or has
   *     columns other than {@link #SCHEMA} (say, from an older release)
   */
  public static Staged stage(LanceLocation table, Origin origin, List<Entry> entries) {
    String uri = table.uri();
    if (entries.isEmpty()) {
      return Staged.NONE;
    }
    try (BufferAllocator a = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, a)) {
      try (Dataset ds = openOrCreate(a, table)) {
        if (!hasErrorsTableColumns(ds)) {
          List<String> have = columnNames(ds.getSchema());
          throw new MaterializedViewException("Errors table '" + uri + "' of view '"
              + origin.view() + "' has columns " + have + ", expected "
              + columnNames(SCHEMA) + " (it was "
              + "written by an older release?); drop or move it, the next refresh recreates it");
        }
      }
      fill(root, origin, entries);
      List<FragmentMetadata> fragments = table.fragments().datasetUri(uri).allocator(a)
          .data(root).execute();
      return new Staged(table, origin, List.copyOf(entries), fragments);
    } catch (MaterializedViewException e) {
      throw e;
    } catch (Exception e) { // lance-core also throws undeclared IOExceptions (object stores)
      throw new MaterializedViewException("Cannot record " + entries.size() + " skipped item(s) "
          + "of view '" + origin.view() + "' (job " + origin.jobId() + ") in errors table '"
          + uri + "', so the refresh commits nothing (a partial view is never committed "
          + "unrecorded): " + e.getMessage(), e);
    }
  }

  /** Whether {@code ds} has exactly this table's columns, i.e. is an errors table. */
  public static boolean hasErrorsTableColumns(Dataset ds) {
    return columnNames(ds.getSchema()).equals(columnNames(SCHEMA));
  }

  private static List<String> columnNames(Schema schema) {
    return schema.getFields().stream().map(Field::getName).toList();
  }

  private static Dataset openOrCreate(BufferAllocator a, LanceLocation table) {
    String uri = table.uri();
    ReadOptions read = table.readOptions().build();
    try {
      return Dataset.open(a, uri, read);
    } catch (RuntimeException notThere) {
      try {
        Dataset.create(a, uri, SCHEMA,
            new WriteParams.Builder()
                .withStorageOptions(table.current()).build()).close();
      } catch (RuntimeException raced) {
        // Another refresh created it meanwhile; opening below tells.
      }
      return Dataset.open(a, uri, read);
    }
  }

  private static void fill(VectorSchemaRoot root, Origin o, List<Entry> entries) {
    root.allocateNew();
    long now = System.currentTimeMillis();
    for (int i = 0; i < entries.size(); i++) {
      Entry e = entries.get(i);
      text(root, "job_id", i, o.jobId());
      text(root, "view", i, o.view());
      text(root, "kind", i, o.kind().wire());
      text(root, "function_name", i, o.functionName());
      text(root, "function_version", i, o.functionVersion());
      ((BigIntVector) root.getVector("source_version")).setSafe(i, o.sourceVersion());
      BigIntVector rowId = (BigIntVector) root.getVector("__source_row_id");
      if (e.sourceRowId() == null) {
        rowId.setNull(i);
      } else {
        rowId.setSafe(i, e.sourceRowId());
      }
      text(root, "partition_column", i, e.partitionColumn());
      text(root, "partition_key", i, e.partitionKey());
      ((IntVector) root.getVector("attempts")).setSafe(i, e.attempts());
      text(root, "error_class", i, e.errorClass());
      text(root, "error_message", i, e.errorMessage());
      ((BigIntVector) root.getVector("recorded_at_ms")).setSafe(i, now);
    }
    root.setRowCount(entries.size());
  }

  private static Field utf8(String name) {
    return new Field(name, FieldType.nullable(ArrowType.Utf8.INSTANCE), null);
  }

  private static Field int64(String name, boolean nullable) {
    FieldType t = nullable ? FieldType.nullable(new ArrowType.Int(64, true))
        : FieldType.notNullable(new ArrowType.Int(64, true));
    return new Field(name, t, null);
  }

  private static void text(VectorSchemaRoot root, String col, int i, String v) {
    VarCharVector vec = (VarCharVector) root.getVector(col);
    if (v == null) {
      vec.setNull(i);
    } else {
      vec.setSafe(i, v.getBytes(StandardCharsets.UTF_8));
    }
  }

  /** Entries written but not yet visible; exactly one of {@link #commit} / {@link #abandon}. */
  public static final class Staged {
    /** Nothing to record. */
    public static final Staged NONE = new Staged(null, null, List.of(), List.of());
    private final LanceLocation table;
    private final Origin origin;
    private final List<Entry> entries;
    private final List<FragmentMetadata> fragments;

    private Staged(LanceLocation table, Origin origin, List<Entry> entries,
        List<FragmentMetadata> fragments) {
      this.table = table;
      this.origin = origin;
      this.entries = entries;
      this.fragments = fragments;
    }

    /** Where the entries go, or null when there are none. */
    public String uri() {
      return entries.isEmpty() ? null : table.uri();
    }

    /**
     * Phase two, after the view commit: makes the entries visible. Never throws: the view has
     * committed, so a failure here is logged at ERROR with every entry.
     *
     * @return whether the entries are now in the table
     */
    public boolean commit() {
      if (entries.isEmpty()) {
        return true;
      }
      Exception last = null;
      for (int attempt = 1; attempt <= COMMIT_ATTEMPTS; attempt++) {
        try (BufferAllocator a = new RootAllocator();
            Dataset ds = table.open(a, null)) {
          // A failed attempt may have landed anyway (its answer lost): appending the same
          // fragments again would record every entry twice.
          if (alreadyAppended(ds)) {
            return true;
          }
          Transaction txn = new Transaction.Builder().readVersion(ds.version())
              .operation(Append.builder().fragments(fragments).build()).build();
          new CommitBuilder(ds).execute(txn).close();
          return true;
        } catch (Exception e) { // lance-core also throws undeclared IOExceptions
          last = e;
          LOG.warn("View '{}' (job {}): appending {} error record(s) to '{}' failed (attempt "
              + "{} of {}): {}", origin.view(), origin.jobId(), entries.size(), table.uri(), attempt,
              COMMIT_ATTEMPTS, e.toString());
        }
      }
      LOG.error("View '{}' (job {}) committed, but its {} skipped item(s) could not be added to "
          + "errors table '{}' ({}); they are:\n  {}", origin.view(), origin.jobId(),
          entries.size(), table.uri(), last, String.join("\n  ", described()));
      return false;
    }

    /** Whether the table already holds the staged data files (an earlier attempt landed). */
    private boolean alreadyAppended(Dataset ds) {
      java.util.Set<String> staged = new java.util.HashSet<>();
      for (FragmentMetadata f : fragments) {
        f.getFiles().forEach(d -> staged.add(d.getPath()));
      }
      for (org.lance.Fragment f : ds.getFragments()) {
        for (org.lance.fragment.DataFile d : f.metadata().getFiles()) {
          if (staged.contains(d.getPath())) {
            return true;
          }
        }
      }
      return false;
    }

    /** The refresh failed after staging: nothing is recorded; the entries are logged. */
    public void abandon(String why) {
      if (entries.isEmpty()) {
        return;
      }
      LOG.warn("View '{}' (job {}) did not commit ({}), so its {} skipped item(s) are not "
          + "recorded in '{}':\n  {}", origin.view(), origin.jobId(), why, entries.size(), table.uri(),
          String.join("\n  ", described()));
    }

    private List<String> described() {
      List<String> out = new ArrayList<>();
      for (Entry e : entries) {
        out.add(e.describe());
      }
      return out;
    }
  }
}
