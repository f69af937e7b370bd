package io.lancerest.spark.mv.commit;

import io.lancerest.spark.connector.CredentialRefresh;
import io.lancerest.spark.connector.PoolShutdown;
import io.lancerest.spark.connector.read.SafeLanceScan;
import io.lancerest.spark.mv.GenevaLayout;
import io.lancerest.spark.mv.MaterializedViewKind;
import io.lancerest.spark.mv.RefreshResult;
import io.lancerest.spark.mv.rowindex.FragmentSourceRanges;
import io.lancerest.spark.mv.rowindex.SourceIdIndexFiles;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.ReadOptions;
import org.lance.Transaction;
import org.lance.operation.Overwrite;
import org.lance.schema.LanceField;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One atomic change of a view table: row deletions, new fragments, schema/field metadata and
 * config, committed as a single new version read at {@code readVersion}.
 *
 * <p>Why {@code Overwrite}: in lance-core 4.0.0 it is the only operation that carries data
 * <em>and</em> schema metadata <em>and</em> config in one commit (see the materialized-view
 * notes). The kept fragments are the view's current ones, updated with deletion vectors from
 * {@link Fragment#deleteRows(List)}, so no existing data file is rewritten.
 *
 * <p>Concurrency: the transaction is read at {@code readVersion}. A commit that lands after that
 * version makes this one fail with {@link ViewCommitConflictException}, and the other writer's
 * change is kept (see {@link #commit(BufferAllocator)} for how, given that lance-core itself
 * lets an Overwrite discard a concurrent Append).
 *
 * <p>Source ranges ({@link FragmentSourceRanges}, query views): the entries of kept fragments
 * stay, those of fragments no longer in the view drop, and new fragments added with a range get
 * an entry under their final id; {@link Builder#replaceAllRows()} keeps only the new ones. A
 * caller that sets {@link FragmentSourceRanges#KEY} itself (or removes it with {@code null})
 * gets exactly that. Kinds that give no ranges never get the key.
 *
 * <p>What lance-core 4.0.0's Overwrite does to the rest: kept fragments keep their stable row
 * ids, new fragments get fresh ones, and every index of the table is dropped (reported in {@link
 * ViewCommitResult#droppedIndexes()} so the caller can rebuild them). A crash before {@link
 * #commit} leaves only unreferenced data files behind (removed by a later cleanup); the view
 * keeps its previous version.
 */
public final class ViewCommit {
  private static final Logger LOG = LoggerFactory.getLogger(ViewCommit.class);
  private final String location;
  private final Map<String, String> storageOptions;
  private final long readVersion;
  private final TreeSet<Long> deleteAddresses;
  private final String deletePredicate;
  private final boolean replaceAllRows;
  /** Fragments dropped whole (a compaction replaces them with new ones). */
  private final TreeSet<Integer> removeFragments;
  private final List<FragmentMetadata> newFragments;
  /** The source row id range of each new fragment, or {@code null} when not known. */
  private final List<FragmentSourceRanges.Range> newRanges;
  private final Map<String, String> schemaMetadata;
  /** The caller set {@link FragmentSourceRanges#KEY} itself: then it is not merged. */
  private final boolean rangesGiven;
  private final Map<String, Map<String, String>> fieldMetadata;
  private final Map<String, String> config;
  private final Map<String, String> transactionProperties;
  private final Job job;
  private ViewCommit(Builder b) {
    this.location = b.location;
    this.storageOptions = Map.copyOf(b.storageOptions);
    this.readVersion = b.readVersion;
    this.deleteAddresses = new TreeSet<>(b.deleteAddresses);
    this.deletePredicate = b.deletePredicate;
    this.replaceAllRows = b.replaceAllRows;
    this.removeFragments = new TreeSet<>(b.removeFragments);
    this.newFragments = List.copyOf(b.newFragments);
    this.newRanges = new ArrayList<>(b.newRanges);
    this.schemaMetadata = new LinkedHashMap<>(b.schemaMetadata);
    this.rangesGiven = b.schemaMetadata.containsKey(FragmentSourceRanges.KEY);
    this.fieldMetadata = new LinkedHashMap<>(b.fieldMetadata);
    this.config = new LinkedHashMap<>(b.config);
    this.transactionProperties = new LinkedHashMap<>(b.transactionProperties);
    this.job = b.job;
  }

  /**
   * The refresh job a commit belongs to. Every kind's refresh names it, and the commit records
   * it as {@link GenevaLayout#LAST_JOB} (what DESCRIBE MATERIALIZED VIEW shows) with the row
   * counts of this very commit, plus job id and kind as transaction properties.
   */
  public record Job(String id, MaterializedViewKind kind, RefreshResult.JobStatus status,
      long sourceVersion) {
    public Job {
      Objects.requireNonNull(id, "id");
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(status, "status");
    }
  }

  public static Builder builder(String location, long readVersion) {
    return new Builder(location, readVersion);
  }

  /**
   * Applies the change and commits version {@code readVersion + 1}.
   *
   * <p>Uses a private allocator: lance-core 4.0.0 leaves 128-256 bytes of Arrow C-schema memory
   * unreleased when an Overwrite conflicts or is rolled back, and a caller's allocator would then
   * fail on close. The leak is bounded by the number of failed commits.
   *
   * @throws ViewCommitConflictException another writer committed after {@code readVersion}
   * @throws ViewCommitNotAppliedException the commit failed and did not land: the view is
   *     unchanged
   * @throws ViewCommitException anything else, its message says what state the view is in
   */
  public ViewCommitResult commit() {
    return commit(null);
  }

  /**
   * {@link #commit()}, running {@code lastStep} after every check, just before lance-core
   * commits ({@link io.lancerest.spark.mv.RefreshListener#beforeCommit}); what it throws
   * aborts the commit with nothing changed.
   */
  public ViewCommitResult commit(Runnable lastStep) {
    RootAllocator allocator = new RootAllocator();
    try {
      return commit(allocator, lastStep == null ? () -> { } : lastStep);
    } finally {
      try {
        allocator.close();
      } catch (IllegalStateException leakedByLanceCore) {
        // See above: accounted memory that lance-core did not hand back; nothing to do.
      }
    }
  }

  /** The view table at {@code version}, or its latest version when null. */
  private Dataset open(BufferAllocator allocator, Long version) {
    ReadOptions.Builder ro = CredentialRefresh.readOptions(storageOptions);
    if (version != null) {
      ro.setVersion(version);
    }
    return Dataset.open(allocator, location, ro.build());
  }

  private ViewCommitResult commit(BufferAllocator allocator, Runnable lastStep) {
    Dataset ds;
    try {
      ds = open(allocator, readVersion);
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      throw new ViewCommitException("Cannot open view table at '" + location + "' version "
          + readVersion + ": " + e.getMessage(), e);
    }
    try (ds) {
      checkFieldIdsAreDense(ds);
      TreeMap<Integer, List<Integer>> offsets = offsetsByFragment(ds, allocator);
      List<FragmentMetadata> fragments = new ArrayList<>();
      long deleted = 0;
      // the fragments this commit drops, whose source id indexes go once it has landed
      List<FragmentMetadata> dropped = new ArrayList<>();
      if (!replaceAllRows) {
        TreeSet<Integer> toRemove = new TreeSet<>(removeFragments);
        List<Fragment> all = ds.getFragments();
        Map<Integer, FragmentMetadata> afterDeletes = deleteRows(all, offsets);
        for (Fragment f : all) {
          if (toRemove.remove(f.getId())) {
            dropped.add(f.metadata());
            if (offsets.remove(f.getId()) != null) {
              throw new ViewCommitException("Fragment " + f.getId() + " of view table '"
                  + location + "' is both removed and has rows deleted in one commit");
            }
            deleted += f.metadata().getNumRows();
            continue;
          }
          if (offsets.remove(f.getId()) == null) {
            fragments.add(f.metadata());
            continue;
          }
          long before = f.metadata().getNumRows();
          FragmentMetadata updated = afterDeletes.get(f.getId());
          // lance-core returns null when every row of the fragment is deleted: drop it.
          long after = updated == null ? 0 : updated.getNumRows();
          deleted += before - after;
          if (updated != null) {
            fragments.add(updated);
          } else {
            dropped.add(f.metadata());
          }
        }
        if (!offsets.isEmpty()) {
          throw new ViewCommitException("Row addresses name fragments " + offsets.keySet()
              + " that are not in view table '" + location + "' at version " + readVersion);
        }
        if (!toRemove.isEmpty()) {
          throw new ViewCommitException("Fragments " + toRemove + " to remove are not in view "
              + "table '" + location + "' at version " + readVersion);
        }
      } else {
        deleted = ds.countRows();
        ds.getFragments().forEach(f -> dropped.add(f.metadata()));
      }
      long added = 0;
      // Ranges of the kept fragments stay (their files are the same); those of fragments no
      // longer in the view drop out with them.
      Map<Integer, FragmentSourceRanges.Entry> recorded = FragmentSourceRanges.parse(
          ds.getSchema().getCustomMetadata() == null ? null
              : ds.getSchema().getCustomMetadata().get(FragmentSourceRanges.KEY));
      Map<Integer, FragmentSourceRanges.Entry> ranges = new TreeMap<>();
      if (!replaceAllRows) {
        for (FragmentMetadata f : fragments) {
          FragmentSourceRanges.Entry e = FragmentSourceRanges.valid(recorded, f);
          if (e != null) {
            ranges.put(f.getId(), e);
          }
        }
      }
      // a fragment without an entry may have lost it (over the entry cap, or to an engine that
      // did not know indexes): its index folder, if any, goes too
      dropped.removeIf(f -> {
        FragmentSourceRanges.Entry e = FragmentSourceRanges.valid(recorded, f);
        return e != null && !e.indexed();
      });
      // Fragment.write() numbers every new fragment from 0. Overwrite keeps the given ids, and
      // duplicate ids corrupt the table (rows vanish from scans), so give them fresh ones.
      int nextId = ds.getFragments().stream().mapToInt(Fragment::getId).max().orElse(-1) + 1;
      for (int i = 0; i < newFragments.size(); i++) {
        FragmentMetadata f = newFragments.get(i);
        FragmentMetadata placed = new FragmentMetadata(nextId++, f.getFiles(),
            f.getPhysicalRows(), f.getDeletionFile(), f.getRowIdMeta());
        fragments.add(placed);
        FragmentSourceRanges.Range r = newRanges.get(i);
        if (r != null) {
          ranges.put(placed.getId(), new FragmentSourceRanges.Entry(r.min(), r.max(),
              FragmentSourceRanges.fileTag(placed), r.indexed()));
        }
        added += f.getNumRows();
      }
      if (!rangesGiven) {
        Map<Integer, Long> rows = new java.util.HashMap<>();
        fragments.forEach(f -> rows.put(f.getId(), f.getPhysicalRows()));
        // null (no entries) removes the key
        schemaMetadata.put(FragmentSourceRanges.KEY, FragmentSourceRanges.format(ranges, rows));
      }
      if (job != null) {
        schemaMetadata.put(GenevaLayout.LAST_JOB, GenevaLayout.lastJobJson(job.id(),
            job.status().name(), job.kind(), job.sourceVersion(), added, deleted,
            System.currentTimeMillis()));
        transactionProperties.put(GenevaLayout.JOB_ID, job.id());
        transactionProperties.put(GenevaLayout.KIND, job.kind().wire());
      }
      Schema schema = schemaWithMetadata(ds.getSchema());
      List<String> droppedIndexes = ds.listIndexes();
      // lance-core lets an Overwrite rebase over any commit that is not itself an Overwrite
      // (measured: an Append landed after the read version is silently discarded). A view must
      // not lose another writer's rows, so a stale read version is refused up front ...
      long latest = ds.latestVersion();
      if (latest != readVersion) {
        throw conflict("version " + latest + " exists", null);
      }
      Overwrite.Builder op = Overwrite.builder().fragments(fragments).schema(schema);
      if (!config.isEmpty()) {
        op.configUpsertValues(config);
      }
      Transaction.Builder txn = new Transaction.Builder()
          .readVersion(readVersion)
          .operation(op.build());
      if (!transactionProperties.isEmpty()) {
        txn.transactionProperties(transactionProperties);
      }
      try {
        lastStep.run();
      } catch (RuntimeException | Error e) { // nothing was committed, nor will these fragments be
        abandon();
        throw e;
      }
      long version;
      // The Transaction holds native (Arrow C) memory: close it on every path.
      Transaction t = txn.build();
      String uuid = t.uuid();
      try (t; Dataset committed = new CommitBuilder(ds).execute(t)) {
        version = committed.version();
      } catch (Exception e) { // lance-core throws the object store's IOException undeclared
        version = landedAnyway(allocator, uuid, e);
      }
      // ... and one that slipped in between that check and the commit is detected here: the
      // view is restored to that writer's version and this change reported as a conflict.
      if (version != readVersion + 1) {
        undoOverwrite(allocator, version);
        throw conflict("versions " + (readVersion + 1) + ".." + (version - 1)
            + " were committed concurrently; this change (version " + version
            + ") was rolled back by restoring version " + (version - 1), null);
      }
      SourceIdIndexFiles.drop(location, storageOptions, dropped);
      return new ViewCommitResult(readVersion, version, deleted, added, newFragments.size(),
          droppedIndexes);
    }
  }

  /** Fragments with deletions at once: each writes a deletion file, and they are independent. */
  private static final int DELETE_THREADS = 2;

  /**
   * Each fragment of {@code all} that {@code offsets} names, with those rows deleted (new
   * deletion files written, nothing committed; {@code null} when no row is left), by id.
   */
  private Map<Integer, FragmentMetadata> deleteRows(List<Fragment> all,
      Map<Integer, List<Integer>> offsets) {
    List<Fragment> touched = new ArrayList<>();
    for (Fragment f : all) {
      if (offsets.containsKey(f.getId()) && !removeFragments.contains(f.getId())) {
        touched.add(f);
      }
    }
    Map<Integer, FragmentMetadata> out = new java.util.HashMap<>();
    if (touched.size() < 2 * DELETE_THREADS) {
      for (Fragment f : touched) {
        out.put(f.getId(), f.deleteRows(offsets.get(f.getId())));
      }
      return out;
    }
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors
        .newFixedThreadPool(DELETE_THREADS, r -> {
          Thread t = new Thread(r, "view-commit-deletes");
          t.setDaemon(true);
          return t;
        });
    try {
      List<java.util.concurrent.Future<FragmentMetadata>> done = new ArrayList<>();
      for (Fragment f : touched) {
        done.add(pool.submit(() -> f.deleteRows(offsets.get(f.getId()))));
      }
      for (int i = 0; i < touched.size(); i++) {
        try {
          out.put(touched.get(i).getId(), done.get(i).get());
        } catch (java.util.concurrent.ExecutionException e) {
          throw e.getCause() instanceof RuntimeException re ? re
              : new ViewCommitException("Deleting rows of fragment " + touched.get(i).getId()
                  + " of view table '" + location + "' failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new ViewCommitException("Interrupted while deleting rows of view table '"
              + location + "'; nothing was committed", e);
        }
      }
      return out;
    } finally {
      // deletion files being written use the dataset the caller closes next
      PoolShutdown.awaitEnd(pool, 5, java.util.concurrent.TimeUnit.MINUTES);
    }
  }

  /**
   * Removes the source id indexes of the fragments this commit would have added, once the
   * caller knows it did not land and will not be tried again with these fragments.
   */
  public void abandon() {
    SourceIdIndexFiles.drop(location, storageOptions, newFragments);
  }

  private void undoOverwrite(BufferAllocator allocator, long committed) {
    long head;
    try (Dataset latest = open(allocator, null)) {
      head = latest.latestVersion();
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      head = -1;
    }
    if (head != committed) {
      // Restoring would also discard what was committed after this change (its answer was
      // lost and found later): leave the view to its owner.
      throw new ViewCommitException("View table '" + location + "': this commit (version "
          + committed + ") landed over concurrent commits " + (readVersion + 1) + ".."
          + (committed - 1) + ", and " + (head < 0 ? "the latest version cannot be read"
          : "versions up to " + head + " followed it") + ", so it was not rolled back "
          + "automatically. Compare the view with its SELECT; RESTORE TABLE … TO VERSION AS OF "
          + (committed - 1) + " undoes this change (and what followed it).");
    }
    try (Dataset previous = open(allocator, committed - 1)) {
      previous.restore();
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      throw new ViewCommitException("View table '" + location + "': this commit (version "
          + committed + ") overwrote a concurrent commit and restoring version "
          + (committed - 1) + " failed: " + e.getMessage() + ". Restore it by hand "
          + "(RESTORE TABLE … TO VERSION AS OF " + (committed - 1) + ").", e);
    }
  }

  private ViewCommitConflictException conflict(String what, Throwable cause) {
    return new ViewCommitConflictException("View table '" + location + "' was modified by "
        + "another commit after version " + readVersion + " (" + what + "); this change was "
        + "not applied. Re-run the refresh: it starts from the latest version.", cause);
  }

  /**
   * The version this commit's transaction ({@code uuid}) landed as although lance-core reported
   * {@code failure}: an object store can apply the PUT of the manifest and lose its answer
   * (object_store does not retry a conditional PUT after a connection error, and a retry after
   * a 5xx can meet its own manifest as "already exists"). Every version after
   * {@code readVersion} is looked at, since lance-core may have rebased the commit; the caller
   * handles one that landed later than {@code readVersion + 1} as it does a rebase. When no
   * version holds it, {@code failure} is classified and thrown; when the versions cannot be
   * read, the failure says the commit may have landed.
   */
  private long landedAnyway(BufferAllocator allocator, String uuid, Exception failure) {
    long latest;
    Long found = null;
    try (Dataset head = open(allocator, null)) {
      latest = head.latestVersion();
      for (long v = readVersion + 1; v <= latest && found == null; v++) {
        try (Dataset at = head.checkoutVersion(v)) {
          Optional<Transaction> txn = at.readTransaction();
          try {
            if (txn.map(x -> uuid.equals(x.uuid())).orElse(false)) {
              found = v;
            }
          } finally {
            txn.ifPresent(Transaction::close);
          }
        }
      }
    } catch (Exception unreadable) { // lance-core's IOException arrives undeclared
      ViewCommitException e = new ViewCommitException("Commit to view table '" + location
          + "' failed (" + failure.getMessage() + "), and reading its versions to see whether "
          + "the commit landed failed too (" + unreadable.getMessage() + "): the view may hold "
          + "this change or not. Read the view before running the refresh again", failure);
      e.addSuppressed(unreadable);
      throw e;
    }
    if (found != null) {
      LOG.warn("View table '{}': the commit failed ({}), but version {} holds this commit's "
          + "transaction {}: it landed", location, failure.getMessage(), found, uuid);
      return found;
    }
    throw classify(failure);
  }

  private RuntimeException classify(Exception e) {
    String m = String.valueOf(e.getMessage());
    String lower = m.toLowerCase(java.util.Locale.ROOT);
    if (lower.contains("conflict") || lower.contains("concurrent")
        || lower.contains("already exists")) {
      return conflict("lance-core: " + m, e);
    }
    return new ViewCommitNotAppliedException(
        "Commit to view table '" + location + "' failed; the view is unchanged: " + m, e);
  }

  /**
   * {@code Overwrite} re-assigns Lance field ids from the Arrow schema in depth-first order. Kept
   * data files reference the old ids, so this is only safe when the old ids are exactly that
   * order (true unless columns were dropped or added after creation).
   */
  private void checkFieldIdsAreDense(Dataset ds) {
    if (replaceAllRows) {
      return;
    }
    int[] next = {0};
    boolean dense = ds.getLanceSchema().fields().stream().allMatch(f -> dense(f, next));
    if (!dense) {
      throw new ViewCommitException("View table '" + location + "' has non-sequential field "
          + "ids (a column was added or dropped after it was created), so its fragments cannot "
          + "be carried into an atomic overwrite. Rebuild the view (DROP and CREATE "
          + "MATERIALIZED VIEW) to restore incremental refresh.");
    }
  }

  private static boolean dense(LanceField f, int[] next) {
    if (f.getId() != next[0]++) {
      return false;
    }
    return f.getChildren().stream().allMatch(c -> dense(c, next));
  }

  private TreeMap<Integer, List<Integer>> offsetsByFragment(Dataset ds, BufferAllocator alloc) {
    TreeSet<Long> addresses = new TreeSet<>(deleteAddresses);
    if (deletePredicate != null && !replaceAllRows) {
      addresses.addAll(addressesMatching(ds, alloc, deletePredicate));
    }
    TreeMap<Integer, List<Integer>> out = new TreeMap<>();
    for (long a : addresses) {
      out.computeIfAbsent((int) (a >>> 32), k -> new ArrayList<>()).add((int) a);
    }
    return out;
  }

  private List<Long> addressesMatching(Dataset ds, BufferAllocator alloc, String predicate) {
    String firstColumn = ds.getSchema().getFields().get(0).getName();
    List<Long> out = new ArrayList<>();
    try {
      SafeLanceScan.scan(ds, SafeLanceScan.Request.of(null, List.of(firstColumn))
          .withFilter(predicate).withRowAddresses(), b -> {
            if (!b.filtered()) {
              // lance-core cannot filter fragments a compaction rewrote in linear time, and a
              // Lance predicate cannot be evaluated here
              throw new ViewCommitException("Cannot evaluate delete predicate '" + predicate
                  + "' on view table '" + location + "': it has fragments rewritten by a "
                  + "compaction; delete by row address instead");
            }
            for (int i = 0; i < b.rowCount(); i++) {
              out.add(b.rowAddress(i));
            }
          });
    } catch (ViewCommitException e) {
      throw e;
    } catch (Exception e) {
      throw new ViewCommitException("Cannot evaluate delete predicate '" + predicate
          + "' on view table '" + location + "': " + e.getMessage(), e);
    }
    return out;
  }

  private Schema schemaWithMetadata(Schema current) {
    Map<String, String> meta = new LinkedHashMap<>(
        current.getCustomMetadata() == null ? Map.of() : current.getCustomMetadata());
    schemaMetadata.forEach((k, v) -> {
      if (v == null) {
        meta.remove(k);
      } else {
        meta.put(k, v);
      }
    });
    Map<String, Map<String, String>> pending = new LinkedHashMap<>(fieldMetadata);
    List<Field> fields = new ArrayList<>();
    for (Field f : current.getFields()) {
      Map<String, String> extra = pending.remove(f.getName());
      if (extra == null) {
        fields.add(f);
        continue;
      }
      Map<String, String> fm = new LinkedHashMap<>(f.getMetadata());
      extra.forEach((k, v) -> {
        if (v == null) {
          fm.remove(k);
        } else {
          fm.put(k, v);
        }
      });
      FieldType t = new FieldType(f.isNullable(), f.getType(), f.getDictionary(), fm);
      fields.add(new Field(f.getName(), t, f.getChildren()));
    }
    if (!pending.isEmpty()) {
      throw new ViewCommitException("Field metadata names columns " + pending.keySet()
          + " that view table '" + location + "' does not have");
    }
    return new Schema(fields, meta);
  }

  /** Collects the parts of one view commit. */
  public static final class Builder {
    private final String location;
    private final long readVersion;
    private Map<String, String> storageOptions = Map.of();
    private final TreeSet<Long> deleteAddresses = new TreeSet<>();
    private String deletePredicate;
    private boolean replaceAllRows;
    private final TreeSet<Integer> removeFragments = new TreeSet<>();
    private final List<FragmentMetadata> newFragments = new ArrayList<>();
    private final List<FragmentSourceRanges.Range> newRanges = new ArrayList<>();
    private final Map<String, String> schemaMetadata = new LinkedHashMap<>();
    private final Map<String, Map<String, String>> fieldMetadata = new LinkedHashMap<>();
    private final Map<String, String> config = new LinkedHashMap<>();
    private final Map<String, String> transactionProperties = new LinkedHashMap<>();
    private Job job;

    private Builder(String location, long readVersion) {
      this.location = Objects.requireNonNull(location, "location");
      if (readVersion < 1) {
        throw new IllegalArgumentException("readVersion must be >= 1, got " + readVersion);
      }
      this.readVersion = readVersion;
    }

    public Builder storageOptions(Map<String, String> options) {
      this.storageOptions = options == null ? Map.of() : options;
      return this;
    }

    /** Deletes rows by row address ({@code fragment_id << 32 | offset}). */
    public Builder deleteRowAddresses(Collection<Long> addresses) {
      deleteAddresses.addAll(addresses);
      return this;
    }

    /**
     * Deletes the rows matching a Lance SQL predicate (e.g. over {@code __source_row_id}),
     * evaluated on the read version.
     */
    public Builder deleteWhere(String predicate) {
      this.deletePredicate = predicate;
      return this;
    }

    /** Drops every existing row: the new fragments become the whole table (UDTF rebuild). */
    public Builder replaceAllRows() {
      this.replaceAllRows = true;
      return this;
    }

    /**
     * Drops whole fragments, by id, with their rows (a compaction adds the rows back as new
     * fragments). Their source ranges drop with them.
     */
    public Builder removeFragments(Collection<Integer> fragmentIds) {
      removeFragments.addAll(fragmentIds);
      return this;
    }

    public Builder addFragments(Collection<FragmentMetadata> fragments) {
      return addFragments(fragments, null);
    }

    /**
     * Adds fragments with the range of source row ids each holds and whether its index was
     * written (same order as {@code fragments}; {@code null}, or a {@code null} entry, when
     * unknown): recorded as {@link FragmentSourceRanges} under the fragments' final ids.
     */
    public Builder addFragments(Collection<FragmentMetadata> fragments,
        List<FragmentSourceRanges.Range> ranges) {
      if (ranges != null && ranges.size() != fragments.size()) {
        throw new IllegalArgumentException(ranges.size() + " source ranges for "
            + fragments.size() + " fragments");
      }
      newFragments.addAll(fragments);
      for (int i = 0; i < fragments.size(); i++) {
        newRanges.add(ranges == null ? null : ranges.get(i));
      }
      return this;
    }

    /** Upserts schema metadata; a {@code null} value removes the key. */
    public Builder schemaMetadata(Map<String, String> metadata) {
      schemaMetadata.putAll(metadata);
      return this;
    }

    /** Upserts metadata of one top-level field; a {@code null} value removes the key. */
    public Builder fieldMetadata(String field, Map<String, String> metadata) {
      fieldMetadata.computeIfAbsent(field, k -> new LinkedHashMap<>()).putAll(metadata);
      return this;
    }

    public Builder config(Map<String, String> values) {
      config.putAll(values);
      return this;
    }

    /** Stored with the transaction (lance-core 4.0.0 has no Java API to read them back). */
    public Builder transactionProperties(Map<String, String> properties) {
      transactionProperties.putAll(properties);
      return this;
    }

    /** Records the refresh job in the commit (see {@link Job}). */
    public Builder job(Job job) {
      this.job = job;
      return this;
    }

    public ViewCommit build() {
      return new ViewCommit(this);
    }
  }
}
