package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.error.MaterializedViewException;
import java.util.HashMap;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.lance.Dataset;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The source and view datasets of one refresh attempt: each version of each table opened once,
 * on first use, and shared by every step that reads it on the driver (the driver's rules, the
 * kind's plan, its driver-side reads, the view commit). Opening a Lance dataset reads its
 * manifest from the object store; a refresh that opened the tables again at every step paid
 * that up to seven times per table. Spark's tasks open what they read themselves.
 *
 * <p>The datasets are lent, never handed over: a step must not close one. The driver closes
 * them all when the attempt ends.
 */
public final class AttemptDatasets implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AttemptDatasets.class);
  private final String viewName;
  private final ViewTables tables;
  private final BufferAllocator allocator = new RootAllocator();
  private final Map<Long, Dataset> source = new HashMap<>();
  /** Why a source version could not be opened, kept so that it is tried once. */
  private final Map<Long, RuntimeException> unopenable = new HashMap<>();
  private Dataset view;

  AttemptDatasets(String viewName, ViewTables tables) {
    this.viewName = viewName;
    this.tables = tables;
  }

  /** The view table at its latest version when the attempt first asked: what it reads and commits on. */
  synchronized Dataset view() {
    if (view == null) {
      try {
        view = open(tables.view(), null);
      } catch (RuntimeException e) {
        throw new MaterializedViewException("Cannot open the table of view " + viewName
            + " at '" + tables.viewUri() + "': " + e.getMessage(), e);
      }
    }
    return view;
  }

  /**
   * The view table at {@code version}, which must be the version this attempt read ({@link
   * RefreshTarget#view()}): an attempt reads and commits on one version of the view.
   */
  public Dataset view(long version) {
    Dataset v = view();
    if (v.version() != version) {
      throw new IllegalStateException("View " + viewName + ": this attempt read version "
          + v.version() + " of the view table, not " + version);
    }
    return v;
  }

  /** The source table at its latest version (kept as that version for the attempt). */
  synchronized Dataset sourceLatest() {
    Dataset ds;
    try {
      ds = open(tables.source(), null);
    } catch (RuntimeException e) {
      throw new MaterializedViewException("Cannot open the source table of view " + viewName
          + " at '" + tables.sourceUri() + "': " + e.getMessage(), e);
    }
    Dataset known = source.putIfAbsent(ds.version(), ds);
    if (known != null) {
      ds.close();
      return known;
    }
    return ds;
  }

  /** The source table at {@code version}; fails naming the view, the table and the version. */
  public Dataset source(long version) {
    try {
      return openSource(version);
    } catch (RuntimeException e) {
      throw new MaterializedViewException("Cannot open version " + version + " of the source "
          + "table of view " + viewName + " at '" + tables.sourceUri() + "': " + e.getMessage(),
          e);
    }
  }

  /**
   * The source table at {@code version}, or {@code null} when that version cannot be opened
   * (never written, or removed by a cleanup): the caller tells which.
   */
  synchronized Dataset sourceIfOpenable(long version) {
    if (unopenable.containsKey(version)) {
      return null;
    }
    try {
      return openSource(version);
    } catch (RuntimeException e) {
      LOG.debug("View {}: version {} of the source table cannot be opened: {}", viewName,
          version, e.getMessage());
      unopenable.put(version, e);
      return null;
    }
  }

  /** Why {@link #sourceIfOpenable} found {@code version} unopenable; {@code null} if it did not. */
  synchronized RuntimeException whyUnopenable(long version) {
    return unopenable.get(version);
  }

  private synchronized Dataset openSource(long version) {
    Dataset ds = source.get(version);
    if (ds == null) {
      RuntimeException known = unopenable.get(version);
      if (known != null) {
        throw known;
      }
      ds = open(tables.source(), version);
      source.put(version, ds);
    }
    return ds;
  }

  private Dataset open(LanceLocation table, Long version) {
    return table.open(allocator, version);
  }

  /** Closes every dataset of the attempt; a failure to close is logged, never thrown. */
  @Override
  public synchronized void close() {
    for (Dataset ds : source.values()) {
      closeQuietly(ds);
    }
    source.clear();
    if (view != null) {
      closeQuietly(view);
      view = null;
    }
    try {
      allocator.close();
    } catch (IllegalStateException leakedByLanceCore) {
      // lance-core 4.0.0 keeps a few hundred bytes of Arrow C-schema memory when a commit on a
      // dataset conflicts or is rolled back (see ViewCommit); it is bounded and not ours to free.
      LOG.debug("View {}: memory still accounted after the attempt: {}", viewName,
          leakedByLanceCore.getMessage());
    }
  }

  private void closeQuietly(Dataset ds) {
    try {
      ds.close();
    } catch (RuntimeException e) {
      LOG.warn("View {}: closing a dataset of the refresh failed: {}", viewName, e.toString());
    }
  }
}
