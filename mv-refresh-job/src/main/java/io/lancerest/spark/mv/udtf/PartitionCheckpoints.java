package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.commit.FragmentFiles;
import io.lancerest.spark.mv.commit.FragmentShipping;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.ReadOptions;
import org.lance.Transaction;
import org.lance.WriteParams;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;
import org.lance.operation.Append;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Per-partition results of a UDTF refresh that has not committed yet, so that the next run
 * resumes.
 *
 * <p>A task that finishes a partition has already written its fragments into the view table
 * (uncommitted). It then records them as one row of a small Lance table inside the view's own
 * location, {@code <view>/_udtf_checkpoints}, written and read through lance-core with the view's
 * storage options (vended credentials included), so it lives wherever the view lives and every
 * executor reaches it. A row holds the run key, the partition's key id and display form, its row
 * count and its serialized fragment metadata. The run key is the SHA-256 of the UDTF's name,
 * version, envelope SHA, the source version and source identity: a later run with the same
 * reuses the rows, and the rows of any other run key are deleted when a run starts. A DONE
 * commit drops the table, and so do a rebuild ({@code force}, a replaced source) before it
 * computes and DROP MATERIALIZED VIEW. A PARTIAL commit keeps it: the refresh that tries the
 * skipped partitions again at the same source version reuses every other partition (their
 * fragments are the committed view's own data files, added again to its replacing commit).
 *
 * <p>Tasks append concurrently; lance-core rebases an Append on another Append and retries the
 * commit itself. Every commit writes a manifest listing all fragments so far, so a task with
 * many small partitions appends what it finished at most every {@link #FLUSH_INTERVAL_MS} ms and
 * when it ends; a task killed in between loses at most that much work to the rerun.
 *
 * <p>Checkpoints only save work for a rerun: one that cannot be written is logged and the
 * partition still succeeds. A checkpoint whose data files are gone (say a VACUUM ran in
 * between) is not reused; the partition is computed again.
 */
public final class PartitionCheckpoints implements java.io.Serializable {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(PartitionCheckpoints.class);
  static final String DIR = "_udtf_checkpoints";
  static final long FLUSH_INTERVAL_MS = 2_000;

  static final Schema SCHEMA = new Schema(List.of(
      new Field("run_key", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null),
      new Field("key_id", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null),
      new Field("key_display", FieldType.nullable(ArrowType.Utf8.INSTANCE), null),
      new Field("rows", FieldType.notNullable(new ArrowType.Int(64, true)), null),
      new Field("fragments", FieldType.notNullable(ArrowType.Binary.INSTANCE), null),
      new Field("written_at_ms", FieldType.notNullable(new ArrowType.Int(64, true)), null)));

  private final String viewLocation;
  private final Map<String, String> storageOptions;
  private final String runKey;

  /**
   * @param storageOptions the view's Lance storage options
   * @param sourceIdentity what tells this source table apart from another one of the same name
   *     (its location and when {@code sourceVersion} was written); "" when unknown. A source
   *     dropped and re-created restarts its version numbers, so the number alone could match a
   *     failed run's checkpoints of the old table.
   */
  PartitionCheckpoints(String viewLocation, Map<String, String> storageOptions,
      UdtfDefinition definition, long sourceVersion, String sourceIdentity) {
    this.viewLocation = viewLocation;
    this.storageOptions = storageOptions == null ? Map.of() : Map.copyOf(storageOptions);
    // Everything that decides a partition's rows: the function, how the input is split, the
    // source version and which table it is.
    this.runKey = PartitionKeys.sha256(String.join("\u0000", definition.name(),
        definition.version(), definition.udtfSha(), String.valueOf(definition.partitionBy()),
        String.valueOf(definition.partitionByIndexedColumn()),
        String.valueOf(definition.inputColumns()), viewLocation, Long.toString(sourceVersion),
        sourceIdentity == null ? "" : sourceIdentity)).substring(0, 32);
  }

  /** One finished partition. */
  record Checkpoint(String keyId, String keyDisplay, long rows, byte[] fragments)
      implements java.io.Serializable {}

  /** Where the checkpoints of the view at {@code viewLocation} are kept. */
  public static String location(String viewLocation) {
    String base = viewLocation.endsWith("/")
        ? viewLocation.substring(0, viewLocation.length() - 1) : viewLocation;
    return base + "/" + DIR;
  }

  String location() {
    return location(viewLocation);
  }

  /** The checkpoint table, resolved once in each JVM that uses this (driver, task). */
  private transient LanceLocation table;

  private LanceLocation table() {
    if (table == null) {
      table = LanceLocation.of(location(), storageOptions);
    }
    return table;
  }

  private ReadOptions readOptions() {
    return table().readOptions().build();
  }

  /** Collects one task's checkpoints and appends them in a few commits; close at task end. */
  Writer writer() {
    return new Writer();
  }

  final class Writer implements AutoCloseable {
    private final List<Checkpoint> pending = new ArrayList<>();
    private long lastFlush = System.nanoTime();

    void add(Checkpoint c) {
      pending.add(c);
      if (System.nanoTime() - lastFlush >= FLUSH_INTERVAL_MS * 1_000_000L) {
        flush();
      }
    }

    void flush() {
      lastFlush = System.nanoTime();
      if (pending.isEmpty()) {
        return;
      }
      try {
        append(pending);
      } catch (Exception e) { // lance-core also throws undeclared IOExceptions
        LOG.warn("Cannot checkpoint {} finished partition(s) of the view at '{}' in '{}'; a "
            + "rerun of a refresh that fails computes them again: {}", pending.size(),
            viewLocation, location(), e.toString());
      }
      pending.clear();
    }

    @Override
    public void close() {
      flush();
    }
  }

  /** Appends {@code checkpoints} as rows of this run key, in one commit. */
  void append(List<Checkpoint> checkpoints) {
    String uri = location();
    try (BufferAllocator a = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, a)) {
      fill(root, checkpoints);
      List<FragmentMetadata> fragments = FragmentShipping.write(table(), a, root, 0);
      try (Dataset ds = Dataset.open(a, uri, readOptions());
          Transaction txn = new Transaction.Builder().readVersion(ds.version())
              .operation(Append.builder().fragments(fragments).build()).build()) {
        new CommitBuilder(ds).execute(txn).close();
      }
    }
  }

  private void fill(VectorSchemaRoot root, List<Checkpoint> checkpoints) {
    root.allocateNew();
    long now = System.currentTimeMillis();
    VarCharVector run = (VarCharVector) root.getVector("run_key");
    VarCharVector id = (VarCharVector) root.getVector("key_id");
    VarCharVector display = (VarCharVector) root.getVector("key_display");
    BigIntVector rows = (BigIntVector) root.getVector("rows");
    VarBinaryVector fragments = (VarBinaryVector) root.getVector("fragments");
    BigIntVector at = (BigIntVector) root.getVector("written_at_ms");
    for (int i = 0; i < checkpoints.size(); i++) {
      Checkpoint c = checkpoints.get(i);
      run.setSafe(i, runKey.getBytes(StandardCharsets.UTF_8));
      id.setSafe(i, c.keyId().getBytes(StandardCharsets.UTF_8));
      if (c.keyDisplay() == null) {
        display.setNull(i);
      } else {
        display.setSafe(i, c.keyDisplay().getBytes(StandardCharsets.UTF_8));
      }
      rows.setSafe(i, c.rows());
      fragments.setSafe(i, c.fragments());
      at.setSafe(i, now);
    }
    root.setRowCount(checkpoints.size());
  }

  /**
   * The usable checkpoints of this run key, by key id, with the checkpoint table created when
   * missing (tasks only append to it). Rows of other run keys (another source version or UDTF
   * version) are deleted: they can never be reused.
   */
  Map<String, Checkpoint> load() {
    String uri = location();
    Map<String, Checkpoint> out = new HashMap<>();
    try (BufferAllocator a = new RootAllocator(); Dataset ds = openOrCreate(a, uri)) {
      if (!columnNames(ds.getSchema()).equals(columnNames(SCHEMA))) {
        throw new UdtfRefreshException("'" + uri + "' holds columns "
            + columnNames(ds.getSchema()) + ", not the UDTF resume checkpoints of the view at '"
            + viewLocation + "' (expected " + columnNames(SCHEMA) + "); move or drop it, the "
            + "next refresh recreates it", null);
      }
      boolean others = false;
      try (LanceScanner scan = ds.newScan(new ScanOptions.Builder().batchSize(1024).build());
          ArrowReader reader = scan.scanBatches()) {
        while (reader.loadNextBatch()) {
          others |= read(reader.getVectorSchemaRoot(), out);
        }
      }
      if (others) {
        try {
          ds.delete("run_key <> '" + runKey + "'");
        } catch (Exception e) {
          // Housekeeping (e.g. racing another refresh's delete): the rows are only unused.
          LOG.info("Checkpoints of other runs of the view at '{}' stay for now: {}",
              viewLocation, e.toString());
        }
      }
      out.values().removeIf(c -> !dataFilesExist(a, c));
      return out;
    } catch (UdtfRefreshException e) {
      throw e;
    } catch (Exception e) {
      // Checkpoints only save work: an unreadable table (e.g. a drop that raced a task's
      // append) must not stop the view's refreshes. Start it again, empty.
      LOG.warn("The resume checkpoints of the view at '{}' in '{}' cannot be read ({}); they "
          + "are dropped and every partition is computed", viewLocation, uri, e.toString());
      try {
        clear();
        try (BufferAllocator a = new RootAllocator(); Dataset ds = openOrCreate(a, uri)) {
          // created empty for the tasks to append to
        }
      } catch (Exception again) {
        LOG.warn("The checkpoint table of the view at '{}' cannot be recreated either ({}); "
            + "this refresh runs without checkpoints", viewLocation, again.toString());
      }
      return new HashMap<>();
    }
  }

  /** Adds this run key's rows of {@code batch} to {@code out}; whether others were seen. */
  private boolean read(VectorSchemaRoot batch, Map<String, Checkpoint> out) {
    VarCharVector run = (VarCharVector) batch.getVector("run_key");
    VarCharVector id = (VarCharVector) batch.getVector("key_id");
    VarCharVector display = (VarCharVector) batch.getVector("key_display");
    BigIntVector rows = (BigIntVector) batch.getVector("rows");
    VarBinaryVector fragments = (VarBinaryVector) batch.getVector("fragments");
    boolean others = false;
    for (int i = 0; i < batch.getRowCount(); i++) {
      if (!runKey.equals(new String(run.get(i), StandardCharsets.UTF_8))) {
        others = true;
        continue;
      }
      String keyId = new String(id.get(i), StandardCharsets.UTF_8);
      // A task attempt Spark ran twice checkpoints its partitions twice; either copy will do.
      out.putIfAbsent(keyId, new Checkpoint(keyId, display.isNull(i) ? null
          : new String(display.get(i), StandardCharsets.UTF_8), rows.get(i), fragments.get(i)));
    }
    return others;
  }

  private Dataset openOrCreate(BufferAllocator a, String uri) {
    try {
      return Dataset.open(a, uri, readOptions());
    } catch (Exception notThere) {
      if (!isNotFound(notThere)) {
        throw notThere;
      }
      try {
        Dataset.create(a, uri, SCHEMA,
            new WriteParams.Builder()
                .withStorageOptions(table().current()).build()).close();
      } catch (Exception raced) {
        // Another run created it meanwhile; opening below tells.
      }
      return Dataset.open(a, uri, readOptions());
    }
  }

  private static boolean isNotFound(Exception e) {
    String m = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
    return m.contains("not found") || m.contains("does not exist") || m.contains("no such file");
  }

  private boolean dataFilesExist(BufferAllocator a, Checkpoint c) {
    String missing = FragmentFiles.firstMissing(table().sibling(viewLocation), a,
        FragmentShipping.fromBytes(c.fragments()));
    if (missing != null) {
      LOG.info("Checkpoint of partition {} of the view at '{}' is not reused: its data file {} "
          + "cannot be opened", c.keyDisplay(), viewLocation, missing);
    }
    return missing == null;
  }

  /** Removes every checkpoint of the view (after a DONE commit, nothing is left to resume). */
  void clear() {
    dropTable(table(), viewLocation);
  }

  /**
   * Drops the checkpoint table of the view at {@code viewLocation}, if there is one (DROP
   * MATERIALIZED VIEW).
   *
   * @throws UdtfRefreshException when it exists and cannot be removed
   */
  public static void drop(LanceLocation view) {
    dropTable(view.sibling(location(view.uri())), view.uri());
  }

  private static void dropTable(LanceLocation checkpoints, String viewLocation) {
    String uri = checkpoints.uri();
    try (BufferAllocator a = new RootAllocator();
        Dataset ignored = checkpoints.open(a, null)) {
      // There: dropped below, once closed.
    } catch (Exception e) {
      if (isNotFound(e)) {
        return;
      }
      // Unreadable is not absent (e.g. access denied): the drop reports it.
    }
    try {
      Dataset.drop(uri, checkpoints.current());
    } catch (Exception e) {
      throw new UdtfRefreshException("Cannot remove the UDTF resume checkpoints of the view at '"
          + viewLocation + "' in '" + uri + "': " + e.getMessage(), e);
    }
  }

  private static List<String> columnNames(Schema schema) {
    return schema.getFields().stream().map(Field::getName).toList();
  }

  @Override
  public String toString() {
    // The storage options may hold credentials.
    return "PartitionCheckpoints{" + location() + ", run " + runKey + "}";
  }
}
