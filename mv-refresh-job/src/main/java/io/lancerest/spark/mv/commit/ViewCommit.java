package io.lancerest.spark.mv.commit;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.layout.GenevaLayout;
import io.lancerest.spark.mv.result.RefreshResult;
import io.lancerest.spark.mv.rowindex.FragmentSourceRanges;
import io.lancerest.spark.mv.rowindex.SourceIdIndexFiles;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.Transaction;
import org.lance.operation.Overwrite;

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
 * <p>Side files ({@link Builder#sideFolders}): a kind's state too large for the config lives in
 * a folder the config names; the commit removes the folder written for it when it does not land,
 * and the one it released once it does.
 *
 * <p>What lance-core 4.0.0's Overwrite does to the rest: kept fragments keep their stable row
 * ids, new fragments get fresh ones, and every index of the table is dropped from the manifest
 * (its files stay). A crash before {@link #commit} leaves only unreferenced data files behind
 * (removed by a later cleanup); the view keeps its previous version.
 *
 * <p>Indexes survive in two steps ({@link IndexCarry}, which says why every guarantee holds):
 * the Overwrite records the index segments it carries in its own schema metadata, its new
 * fragments taking ids above every id their bitmaps name; once it landed, the segments are
 * registered again and each index brought up to date, each a commit of its own.
 */
public final class ViewCommit {
  private final LanceLocation table;
  private final String location;
  private final long readVersion;
  private final CommitFragments rows;
  private final CommitMetadata metadata;
  private final CommitRecovery recovery;
  /** The indexes the Overwrite carries over (it drops every index of the table). */
  private final IndexCarry indexes;
  /** Fragments written by an earlier run and committed again: checked for their files. */
  private final List<FragmentMetadata> reused;
  /** Folders of side files written for this commit, and released by it. */
  private final SideFolders sideFolders;
  /** Whether {@link #abandon} ran. */
  private boolean abandoned;

  private ViewCommit(Builder b) {
    this.location = b.location;
    this.table = b.table != null ? b.table : LanceLocation.of(b.location, b.storageOptions);
    this.readVersion = b.readVersion;
    this.rows = new CommitFragments(b.location, b.readVersion, b.deleteAddresses,
        b.deletePredicate, b.replaceAllRows, b.removeFragments, b.newFragments, b.newRanges);
    this.metadata = new CommitMetadata(b.location, b.schemaMetadata, b.fieldMetadata, b.config,
        b.transactionProperties, b.job);
    this.recovery = new CommitRecovery(table, readVersion);
    this.indexes = new IndexCarry(b.location, b.readVersion);
    this.reused = List.copyOf(b.reused);
    this.sideFolders = new SideFolders(table, b.writtenFolder, b.releasedFolder);
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

  /** A commit to the view table as the statement resolved it. */
  public static Builder builder(LanceLocation table, long readVersion) {
    Builder b = new Builder(table.uri(), readVersion);
    b.table = table;
    return b;
  }

  /**
   * What a commit to {@code view} (its version the refresh reads) would do to each of its
   * indexes, one line each, for EXPLAIN REFRESH; {@code rewrites}: the commit replaces every
   * row, {@code noOp}: there is no commit.
   */
  public static List<String> indexPlan(Dataset view, boolean rewrites, boolean noOp) {
    return IndexPlan.explain(view, rewrites, noOp);
  }

  /** A commit to the table at {@code location}, opened with {@link Builder#storageOptions}. */
  public static Builder builder(String location, long readVersion) {
    return new Builder(location, readVersion);
  }

  /**
   * Applies the change and commits version {@code readVersion + 1}.
   *
   * <p>Uses a {@link PrivateAllocator}, which lance-core's leak after a failed Overwrite cannot
   * make fail on close.
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
    return PrivateAllocator.run(a -> commit(a, lastStep == null ? () -> { } : lastStep));
  }

  /**
   * {@link #commit(Runnable)} on {@code readAt}, the view table at the read version as the
   * refresh already opened it (and still owns: it is not closed here), up to and including the
   * Overwrite only: the result lists no index, and the caller then calls {@link #carryIndexes}
   * once what must follow the data at once is done (a refresh's error rows and clean-up come
   * before index work that can take minutes). The memory lance-core keeps after a failed
   * Overwrite is then accounted to {@code readAt}'s allocator, which its owner closes knowing
   * the commit failed.
   */
  public ViewCommitResult commitData(Dataset readAt, Runnable lastStep) {
    if (readAt.version() != readVersion) {
      throw new IllegalArgumentException("View table '" + location + "': the commit reads "
          + "version " + readVersion + ", not version " + readAt.version());
    }
    return PrivateAllocator.run(a -> {
      Landed landed = overwrite(a, readAt, lastStep);
      return result(landed, new IndexCarry.Carried(List.of(), landed.version()));
    });
  }

  /**
   * The second step after {@link #commitData}: registers the indexes its Overwrite carried and
   * brings them up to date (see the class comment); {@code landed} with what happened to each.
   * Never throws: what it leaves undone is in the result, and the view's next commit (or
   * maintenance, or a refresh with nothing to do) finishes it.
   */
  public ViewCommitResult carryIndexes(ViewCommitResult landed) {
    return PrivateAllocator.run(a -> {
      IndexCarry.Carried c = indexes.carry(table, a, landed.version());
      return new ViewCommitResult(landed.readVersion(), landed.version(), landed.rowsDeleted(),
          landed.rowsAdded(), landed.fragmentsAdded(), c.indexes(), c.latestVersion());
    });
  }

  /**
   * Registers what an interrupted commit of the view at {@code view} still owes (the
   * Overwrite landed, the registration did not), without a commit of data: for a refresh with
   * nothing to commit and for maintenance, before a cleanup can remove the files. Returns what
   * happened to each index ({@code vix: updated, ...}), or {@code null} when nothing was owed.
   * Never throws.
   */
  public static String registerOwedIndexes(LanceLocation view) {
    return IndexCarry.registerOwed(view);
  }

  /**
   * {@link #registerOwedIndexes(LanceLocation)} when {@code latest}, the view as the caller
   * already opened it at its latest version, records carried indexes at all; a view that never
   * carried one owes nothing, and is not opened again.
   */
  public static String registerOwedIndexes(LanceLocation view, Dataset latest) {
    Map<String, String> md = latest.getSchema().getCustomMetadata();
    return md == null || md.get(IndexCarry.KEY) == null ? null : registerOwedIndexes(view);
  }

  private ViewCommitResult commit(BufferAllocator allocator, Runnable lastStep) {
    Dataset ds;
    try {
      ds = recovery.open(allocator, readVersion);
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      abandon();
      throw new ViewCommitNotAppliedException("Cannot open view table at '" + location
          + "' version " + readVersion + ": " + e.getMessage() + "; nothing was committed", e);
    }
    try (ds) {
      return commitOn(allocator, ds, lastStep);
    }
  }

  /** What the commit applies, checked and ready for lance-core. */
  private record Prepared(CommitFragments.Applied applied, Transaction.Builder txn) {}

  /** The Overwrite that landed as {@code version}, its indexes not carried over yet. */
  record Landed(CommitFragments.Applied applied, long version) {}

  private ViewCommitResult commitOn(BufferAllocator allocator, Dataset ds, Runnable lastStep) {
    return carryIndexes(allocator, overwrite(allocator, ds, lastStep));
  }

  /**
   * The first step of the commit: the Overwrite (data, watermark, metadata, config, and the
   * record of the indexes it carries), landed as {@code readVersion + 1} or not at all.
   */
  Landed overwrite(BufferAllocator allocator, Dataset ds, Runnable lastStep) {
    Prepared p;
    try {
      p = prepare(allocator, ds, lastStep);
    } catch (ViewCommitConflictException e) {
      throw e; // the caller decides: compaction commits these fragments on the new version
    } catch (RuntimeException | Error e) { // nothing was committed, nor will these fragments be
      abandon();
      throw e;
    }
    CommitFragments.Applied applied = p.applied();
    long version;
    // The Transaction holds native (Arrow C) memory: close it on every path.
    Transaction t = p.txn().build();
    String uuid = t.uuid();
    try (t; Dataset committed = new CommitBuilder(ds).execute(t)) {
      version = committed.version();
    } catch (Exception e) { // lance-core throws the object store's IOException undeclared
      version = recovery.landedAnyway(allocator, uuid, e);
    }
    // ... and one that slipped in between that check and the commit is detected here: the
    // view is restored to that writer's version and this change reported as a conflict.
    if (version != readVersion + 1) {
      recovery.undoOverwrite(allocator, version);
      throw recovery.conflict("versions " + (readVersion + 1) + ".." + (version - 1)
          + " were committed concurrently; this change (version " + version
          + ") was rolled back by restoring version " + (version - 1), null);
    }
    SourceIdIndexFiles.drop(table, applied.dropped());
    sideFolders.dropReleased();
    return new Landed(applied, version);
  }

  /**
   * The second step: the indexes the Overwrite carried are registered again and brought up to
   * date (each a commit of its own after the Overwrite; see the class comment). Never fails:
   * what it leaves undone is in the result, and the next commit of the view finishes it.
   */
  ViewCommitResult carryIndexes(BufferAllocator allocator, Landed landed) {
    return updateIndexes(allocator, landed, registerIndexes(allocator, landed));
  }

  /** The first part of {@link #carryIndexes}: the carried segments registered again. */
  IndexRegistration.Registered registerIndexes(BufferAllocator allocator, Landed landed) {
    return indexes.register(table, allocator, landed.version());
  }

  /** The second part: each index {@code registered} brought up to date. */
  ViewCommitResult updateIndexes(BufferAllocator allocator, Landed landed,
      IndexRegistration.Registered registered) {
    return result(landed, indexes.update(table, allocator, registered));
  }

  private ViewCommitResult result(Landed landed, IndexCarry.Carried c) {
    CommitFragments.Applied applied = landed.applied();
    return new ViewCommitResult(readVersion, landed.version(), applied.deleted(),
        applied.added(), rows.newFragments().size(), c.indexes(), c.latestVersion());
  }

  /** Applies the change to {@code ds}'s fragments and metadata, checks it, runs the last step. */
  private Prepared prepare(BufferAllocator allocator, Dataset ds, Runnable lastStep) {
    indexes.gather(ds);
    CommitFragments.Applied applied = rows.apply(ds, allocator, indexes.firstNewFragmentId());
    metadata.record(applied);
    metadata.carriedIndexes(indexes.select(applied.fragments(), rows.replacesAll(),
        applied.added()));
    Schema schema = metadata.schema(ds.getSchema());
    // A fragment kept aside by an earlier run is no longer protected by the view's versions: a
    // cleanup may have removed its files while this run computed. Checked just before the
    // commit (and before the cheap version check, which then stays the last step), so that a
    // file gone by now is not committed; the attempt starts again and computes what it held.
    String missing = reused.isEmpty() ? null
        : FragmentFiles.firstMissing(table, allocator, reused);
    if (missing != null) {
      throw new ViewCommitConflictException("View table '" + location + "': data file "
          + missing + " of a fragment reused from an earlier run cannot be opened (removed by "
          + "a cleanup of the view?); nothing was applied, and the refresh computes it again",
          null);
    }
    // lance-core lets an Overwrite rebase over any commit that is not itself an Overwrite
    // (measured: an Append landed after the read version is silently discarded). A view must
    // not lose another writer's rows, so a stale read version is refused up front ...
    long latest = ds.latestVersion();
    if (latest != readVersion) {
      throw recovery.conflict("version " + latest + " exists", null);
    }
    Overwrite.Builder op = Overwrite.builder().fragments(applied.fragments()).schema(schema);
    if (!metadata.config().isEmpty()) {
      op.configUpsertValues(metadata.config());
    }
    Transaction.Builder txn = new Transaction.Builder()
        .readVersion(readVersion)
        .operation(op.build());
    if (!metadata.transactionProperties().isEmpty()) {
      txn.transactionProperties(metadata.transactionProperties());
    }
    lastStep.run();
    return new Prepared(applied, txn);
  }

  /**
   * Removes the source id indexes of the fragments this commit would have added, once the
   * caller knows it did not land and will not be tried again with these fragments.
   */
  public void abandon() {
    if (abandoned) {
      return; // a caller abandons on every path that knows the commit did not land
    }
    abandoned = true;
    SourceIdIndexFiles.drop(table, rows.newFragments());
    sideFolders.dropWritten();
  }

  /** Collects the parts of one view commit. */
  public static final class Builder {
    private final String location;
    private final long readVersion;
    private LanceLocation table;
    private Map<String, String> storageOptions = Map.of();
    private final TreeSet<Long> deleteAddresses = new TreeSet<>();
    private String deletePredicate;
    private boolean replaceAllRows;
    private final TreeSet<Integer> removeFragments = new TreeSet<>();
    private final List<FragmentMetadata> newFragments = new ArrayList<>();
    private final List<FragmentMetadata> reused = new ArrayList<>();
    private final List<FragmentSourceRanges.Range> newRanges = new ArrayList<>();
    private final Map<String, String> schemaMetadata = new LinkedHashMap<>();
    private final Map<String, Map<String, String>> fieldMetadata = new LinkedHashMap<>();
    private final Map<String, String> config = new LinkedHashMap<>();
    private final Map<String, String> transactionProperties = new LinkedHashMap<>();
    private Job job;
    private String writtenFolder;
    private String releasedFolder;

    private Builder(String location, long readVersion) {
      this.location = Objects.requireNonNull(location, "location");
      if (readVersion < 1) {
        throw new IllegalArgumentException("readVersion must be >= 1, got " + readVersion);
      }
      this.readVersion = readVersion;
    }

    public Builder storageOptions(Map<String, String> options) {
      if (table != null) {
        throw new IllegalStateException("The storage options of " + location + " come with "
            + "its resolved location");
      }
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

    /**
     * Adds fragments an earlier run wrote and kept aside (resume checkpoints): their data files
     * are checked just before the commit, which is refused as a conflict when one is gone.
     */
    public Builder addReusedFragments(Collection<FragmentMetadata> fragments) {
      reused.addAll(fragments);
      return addFragments(fragments);
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

    /**
     * Side files under the view's root that lance-core does not manage (a kind's state too large
     * for the config, which names them): {@code written}, the folder written for this commit,
     * is removed when the commit is abandoned; {@code released}, one the view no longer needs
     * once this commit landed, is removed then. Either may be {@code null}.
     */
    public Builder sideFolders(String written, String released) {
      this.writtenFolder = written;
      this.releasedFolder = released;
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
