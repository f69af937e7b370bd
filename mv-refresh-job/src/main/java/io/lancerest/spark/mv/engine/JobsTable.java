package io.lancerest.spark.mv.engine;

import com.fasterxml.jackson.core.type.TypeReference;
import io.lancerest.client.LanceJson;
import io.lancerest.spark.mv.engine.CatalogBinding.TableLocation;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.maintenance.ViewMaintenance;
import io.lancerest.spark.mv.refresh.JobLog;
import io.lancerest.spark.mv.result.JobRecord;
import io.lancerest.spark.mv.result.RefreshResult.JobStatus;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.Transaction;
import org.lance.cleanup.CleanupPolicy;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;
import org.lance.operation.Append;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The job log of one catalog: a Lance table of its server ({@code __system.mv_jobs} by default),
 * created through the catalog on first use. It is append-only: every state change of a job is a
 * new row, and a job's row with the highest {@code seq} is its state. Appends never conflict with
 * each other in Lance (two drivers recording at once both land), an update would (and would
 * leave deletion files, which make lance-core 4.0.0 scans slow), and the history of a job stays
 * readable. Each append is one small fragment; {@link #maintain} merges them, and deletes every
 * row of the ended jobs its {@link JobLogRetention} no longer keeps (rows are never changed).
 */
final class JobsTable implements JobLog {
  private static final Logger LOG = LoggerFactory.getLogger(JobsTable.class);
  static final String NAMESPACE_CONF = "spark.lancerest.mv.jobs.namespace";
  static final String TABLE_CONF = "spark.lancerest.mv.jobs.table";
  static final String DEFAULT_NAMESPACE = "__system";
  static final String DEFAULT_TABLE = "mv_jobs";
  private static final int APPEND_ATTEMPTS = 3;
  /**
   * Fragments past which the table is compacted (each append adds one). Every append opens the
   * log and commits to it, and both read every fragment's metadata: a small bound keeps the
   * cost of a refresh's two appends from growing with the refreshes before it.
   */
  static final int COMPACT_ABOVE_FRAGMENTS = 16;
  /**
   * How long a version of the log is kept after a later one replaced it. A commit to a Lance
   * table takes longer the more versions it keeps (VersionCostBenchmark: 1-2 ms at 20, 15-40 ms
   * at 2,000 here), and a refresh appends two or more: the log keeps only what a reader that
   * opened it recently may still be scanning (a scan of the log takes milliseconds). Nobody
   * time-travels the log; its rows all stay in the latest version. At a refresh a second, a
   * minute kept over a hundred versions, and the log's appends were a fifth of the refresh
   * time in MaintenanceBenchmark's later refreshes (a JFR profile).
   */
  static final java.time.Duration VERSION_RETENTION = java.time.Duration.ofSeconds(10);
  /** The newest versions of the log, kept at every cleanup however old they are. */
  static final int KEEP_LATEST = 8;

  /**
   * The columns. Names follow Geneva's {@code geneva_jobs} where the meaning is the same
   * ({@code job_id, table_name, job_type, status, launched_at, completed_at, updated_at,
   * launched_by, config}); the counters are columns of their own where Geneva keeps a list of
   * JSON metrics.
   */
  static final StructType SCHEMA = new StructType()
      .add("job_id", DataTypes.StringType, false)
      .add("seq", DataTypes.LongType, false)
      .add("table_name", DataTypes.StringType)
      .add("view_id", DataTypes.StringType)
      .add("job_type", DataTypes.StringType)
      .add("kind", DataTypes.StringType)
      .add("status", DataTypes.StringType, false)
      .add("source_version", DataTypes.LongType)
      .add("launched_at", DataTypes.TimestampType)
      .add("completed_at", DataTypes.TimestampType)
      .add("updated_at", DataTypes.TimestampType)
      .add("items_done", DataTypes.LongType)
      .add("items_total", DataTypes.LongType)
      .add("rows_written", DataTypes.LongType)
      .add("rows_inserted", DataTypes.LongType)
      .add("rows_deleted", DataTypes.LongType)
      .add("skipped", DataTypes.LongType)
      .add("message", DataTypes.StringType)
      .add("application_id", DataTypes.StringType)
      .add("launched_by", DataTypes.StringType);

  private final CatalogBinding cat;
  private final List<String> id;
  private final JobLogRetention retention;
  private volatile TableLocation location;
  /** This catalog described the log and found none, and has not created it since. */
  private volatile boolean knownAbsent;

  /** @param retention which ended jobs {@link #maintain()} deletes */
  JobsTable(CatalogBinding cat, String namespace, String table, JobLogRetention retention) {
    this.cat = cat;
    this.id = List.of(namespace, table);
    this.retention = retention;
  }

  /** {@code catalog.__system.mv_jobs}, as users name it. */
  String display() {
    return cat.display(id);
  }

  @Override
  public void append(List<JobRecord> records) {
    if (records.isEmpty()) {
      return;
    }
    TableLocation loc = writable("Recording refresh jobs in " + display() + " is refused", null);
    Exception last = null;
    for (int attempt = 1; attempt <= APPEND_ATTEMPTS; attempt++) {
      try (BufferAllocator a = new RootAllocator();
          Dataset ds = open(a, loc)) {
        List<FragmentMetadata> fragments;
        try (VectorSchemaRoot root = VectorSchemaRoot.create(ds.getSchema(), a)) {
          fill(root, records);
          fragments = loc.dataset().fragments().datasetUri(loc.location()).allocator(a).data(root)
              .execute();
        }
        Transaction txn = new Transaction.Builder().readVersion(ds.version())
            .operation(Append.builder().fragments(fragments).build()).build();
        new CommitBuilder(ds).execute(txn).close();
        return;
      } catch (Exception e) { // lance-core throws IOException undeclared (an object store's)
        last = e;
      }
    }
    throw new MaterializedViewException("Cannot append " + records.size() + " state(s) to job "
        + "log " + display() + " after " + APPEND_ATTEMPTS + " attempts: " + last.getMessage(),
        last);
  }

  /** The newest state of every job in the log; empty when the log does not exist yet. */
  List<JobRecord> latest() {
    TableLocation loc = location();
    if (loc == null) {
      return List.of();
    }
    Map<String, JobRecord> newest = new HashMap<>();
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = open(a, loc);
        LanceScanner scan = ds.newScan(new ScanOptions.Builder()
            .columns(List.of(SCHEMA.fieldNames())).batchSize(8192).build());
        ArrowReader reader = scan.scanBatches()) {
      while (reader.loadNextBatch()) {
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        for (int i = 0; i < root.getRowCount(); i++) {
          JobRecord r = read(root, i);
          newest.merge(r.jobId(), r, (x, y) -> y.seq() > x.seq() ? y : x);
        }
      }
    } catch (MaterializedViewException e) {
      throw e;
    } catch (Exception e) { // lance-core's scanner declares Exception on close
      throw new MaterializedViewException("Cannot read job log " + display() + ": "
          + e.getMessage(), e);
    }
    return new ArrayList<>(newest.values());
  }

  /**
   * Once there are more than {@value #COMPACT_ABOVE_FRAGMENTS} fragments (each append adds one),
   * deletes the ended jobs the retention no longer keeps ({@link JobLogRetention}) and merges the
   * fragments, which drops the deleted rows from the files; then removes the versions replaced
   * more than {@link #VERSION_RETENTION} ago. Pruning goes with the compaction because that
   * rewrites the log anyway: a prune at every run would, once a view is at its cap, delete one
   * job per refresh, each a commit and a deletion file. Concurrent appends still land. Runs on
   * the configuration's maintenance thread ({@link JobThreads}) after jobs end, never inside a
   * refresh nor on the heartbeat thread.
   */
  void maintain() {
    maintain(VERSION_RETENTION, retention);
  }

  /**
   * {@link #maintain()}, removing the versions replaced more than {@code versions} ago and
   * pruning by {@code jobs}. One run at a time in a driver: two cleanups of the log at once fail
   * each other (a manifest one of them lists is gone when it reads it).
   */
  synchronized void maintain(java.time.Duration versions, JobLogRetention jobs) {
    TableLocation loc = location();
    if (loc == null || loc.managedVersioning()) {
      return; // a log the server versions is never written (writable)
    }
    try (BufferAllocator a = new RootAllocator(); Dataset ds = open(a, loc)) {
      boolean compacted = ds.getFragments().size() > COMPACT_ABOVE_FRAGMENTS;
      if (compacted) {
        jobs.prune(() -> open(a, loc), System.currentTimeMillis(), display());
        // on the version after the prune, so that it merges its deletions away
        try (Dataset pruned = open(a, loc)) {
          pruned.compact();
        }
      }
      // Every append is a version (two or more per refresh), and committing the next one takes
      // longer with each one kept. The newest version created before the cutoff was the log
      // until a later one replaced it, so it stays (ViewMaintenance.oldestKept).
      try (Dataset latest = compacted ? open(a, loc) : null) {
        Dataset now = compacted ? latest : ds;
        Long keepFrom = ViewMaintenance.oldestKept(now.listVersions(),
            System.currentTimeMillis() - versions.toMillis());
        if (keepFrom != null) {
          // and the newest few whatever their age: another driver's clock may run behind
          keepFrom = Math.min(keepFrom, Math.max(1, now.version() - KEEP_LATEST + 1));
        }
        if (keepFrom != null && keepFrom > 1) {
          now.cleanupWithPolicy(CleanupPolicy.builder().withBeforeVersion(keepFrom).build());
        }
      }
    }
  }


  private static Dataset open(BufferAllocator a, TableLocation loc) {
    return loc.dataset().open(a, null);
  }

  /**
   * Where the table lives, for reading it; {@code null} when it does not exist yet. Kept for the
   * catalog's session once found, unless its server manages its versions: such a log is never
   * written here, and whoever created it for nothing drops it again ({@link #created}), so it
   * is described again at each use rather than kept as a table that may be gone.
   */
  TableLocation location() {
    TableLocation l = location;
    if (l != null) {
      return l;
    }
    try {
      l = cat.locate(id, "job log");
    } catch (MaterializedViewNotFoundException absent) {
      knownAbsent = true;
      return null;
    }
    knownAbsent = false;
    if (!l.managedVersioning()) {
      location = l;
    }
    return l;
  }

  /**
   * {@link #location()} for a check that has nothing to check when there is no log (EXPLAIN
   * REFRESH): once this catalog found the log missing it is not described again until this
   * catalog creates it, so explaining costs no request while there is none. A log another
   * driver creates meanwhile is checked by the refresh itself ({@link #writable}).
   */
  TableLocation locationIfKnownPresent() {
    return location == null && knownAbsent ? null : location();
  }

  /**
   * Where the table lives, for a write: created (and its namespace) if missing. A log whose
   * versions its server manages is refused ({@link ManagedVersions#JOB_LOG}), since every write
   * here commits in storage; one this call created only to find that is dropped again.
   *
   * @param lead what is refused then, the first words of the message
   * @param outcome what was left undone, or {@code null}
   * @throws io.lancerest.spark.mv.error.VersionManagedTableException as said
   */
  TableLocation writable(String lead, String outcome) {
    TableLocation l = location();
    if (l == null) {
      l = created();
    }
    ManagedVersions.JOB_LOG.refuse(l, cat, lead, outcome);
    return l;
  }

  /**
   * The log, created now unless another thread or driver just did. One whose server manages
   * its versions is not kept ({@link #location()}), whether this call created it (then it drops
   * it again) or another driver did (which drops it): no thread keeps a dropped table's
   * location.
   */
  private synchronized TableLocation created() {
    TableLocation l = location(); // another thread of this catalog may have made it meanwhile
    if (l != null) {
      return l;
    }
    boolean made = createTable();
    l = location();
    if (l == null) { // e.g. the driver that created it found it managed and dropped it
      throw new MaterializedViewException("Job log " + display() + " was dropped again right "
          + "after it was created; run the statement again");
    }
    if (l.managedVersioning() && made) {
      dropCreated();
    }
    return l;
  }

  /** Drops the log this driver has just created; a failure only leaves an empty table. */
  private void dropCreated() {
    try {
      cat.catalog().purgeTable(CatalogBinding.ident(id));
    } catch (RuntimeException e) {
      LOG.warn("Job log {}: dropping the empty table created before its server was found to "
          + "manage its versions failed: {}", display(), e.toString());
    } finally {
      cat.invalidate(id);
    }
  }

  /** Creates the table (and its namespace); false when another driver created it first. */
  private boolean createTable() {
    String[] ns = {id.get(0)};
    try {
      SupportsNamespaces namespaces = (SupportsNamespaces) cat.catalog();
      if (!namespaces.namespaceExists(ns)) {
        namespaces.createNamespace(ns, Map.of("comment", "materialized-view engine state"));
      }
    } catch (NamespaceAlreadyExistsException raced) {
      // another driver created it meanwhile
    }
    try {
      // Without stable row ids: the log is never updated in place, and lance-core 4.0.0 reads
      // compacted tables with stable row ids slowly (docs/lance-core-scan-defect.md).
      cat.catalog().createTable(CatalogBinding.ident(id), SCHEMA, new Transform[0],
          Map.of("enable_stable_row_ids", "false", "comment",
              "Refresh jobs of materialized views, one row per state change"));
    } catch (TableAlreadyExistsException raced) {
      return false; // another driver created it meanwhile
    } catch (Exception e) { // createTable declares NoSuchNamespaceException
      throw new MaterializedViewException("Cannot create job log " + display() + ": "
          + e.getMessage(), e);
    }
    return true;
  }

  private static void fill(VectorSchemaRoot root, List<JobRecord> records) {
    root.allocateNew();
    for (int i = 0; i < records.size(); i++) {
      JobRecord r = records.get(i);
      text(root, "job_id", i, r.jobId());
      num(root, "seq", i, r.seq());
      text(root, "table_name", i, r.view());
      text(root, "view_id", i, json(r.viewId()));
      text(root, "job_type", i, "REFRESH");
      text(root, "kind", i, r.kind());
      text(root, "status", i, r.status().name());
      num(root, "source_version", i, r.sourceVersion());
      millis(root, "launched_at", i, r.startedAt());
      millis(root, "completed_at", i, r.finishedAt());
      millis(root, "updated_at", i, r.heartbeatAt());
      num(root, "items_done", i, r.itemsDone());
      num(root, "items_total", i, r.itemsTotal());
      num(root, "rows_written", i, r.rowsWritten());
      num(root, "rows_inserted", i, r.rowsInserted());
      num(root, "rows_deleted", i, r.rowsDeleted());
      num(root, "skipped", i, r.skipped());
      text(root, "message", i, r.message());
      text(root, "application_id", i, r.applicationId());
      text(root, "launched_by", i, r.launchedBy());
    }
    root.setRowCount(records.size());
  }

  private static JobRecord read(VectorSchemaRoot root, int i) {
    Long seq = num(root, "seq", i);
    Long started = millis(root, "launched_at", i);
    Long heartbeat = millis(root, "updated_at", i);
    return new JobRecord(text(root, "job_id", i), viewId(text(root, "view_id", i)),
        text(root, "kind", i), JobStatus.valueOf(text(root, "status", i)),
        num(root, "source_version", i), started == null ? 0 : started,
        millis(root, "completed_at", i), heartbeat == null ? 0 : heartbeat,
        zero(num(root, "items_done", i)), zero(num(root, "items_total", i)),
        zero(num(root, "rows_written", i)), zero(num(root, "rows_inserted", i)),
        zero(num(root, "rows_deleted", i)), zero(num(root, "skipped", i)),
        text(root, "message", i), text(root, "application_id", i),
        text(root, "launched_by", i), seq == null ? 0 : seq);
  }

  private static long zero(Long v) {
    return v == null ? 0 : v;
  }

  private static String json(List<String> viewId) {
    try {
      return LanceJson.mapper().writeValueAsString(viewId);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static List<String> viewId(String json) {
    if (json == null) {
      return List.of();
    }
    try {
      return LanceJson.mapper().readValue(json, new TypeReference<List<String>>() { });
    } catch (IOException e) {
      return List.of(json);
    }
  }

  private static void text(VectorSchemaRoot root, String col, int i, String v) {
    VarCharVector vec = (VarCharVector) root.getVector(col);
    if (v == null) {
      vec.setNull(i);
    } else {
      vec.setSafe(i, v.getBytes(StandardCharsets.UTF_8));
    }
  }

  static String text(VectorSchemaRoot root, String col, int i) {
    VarCharVector vec = (VarCharVector) root.getVector(col);
    return vec.isNull(i) ? null : new String(vec.get(i), StandardCharsets.UTF_8);
  }

  private static void num(VectorSchemaRoot root, String col, int i, Long v) {
    BigIntVector vec = (BigIntVector) root.getVector(col);
    if (v == null) {
      vec.setNull(i);
    } else {
      vec.setSafe(i, v);
    }
  }

  static Long num(VectorSchemaRoot root, String col, int i) {
    BigIntVector vec = (BigIntVector) root.getVector(col);
    return vec.isNull(i) ? null : vec.get(i);
  }

  /** Spark's TIMESTAMP is stored as microseconds since the epoch (UTC). */
  private static void millis(VectorSchemaRoot root, String col, int i, Long ms) {
    FieldVector v = root.getVector(col);
    TimeStampVector ts = (TimeStampVector) v;
    if (ms == null) {
      ts.setNull(i);
    } else {
      ts.setSafe(i, ms * 1000);
    }
  }

  static Long millis(VectorSchemaRoot root, String col, int i) {
    TimeStampVector ts = (TimeStampVector) root.getVector(col);
    return ts.isNull(i) ? null : ts.get(i) / 1000;
  }
}
