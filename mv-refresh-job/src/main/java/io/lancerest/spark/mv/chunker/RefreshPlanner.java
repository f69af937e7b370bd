package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.refresh.RefreshTarget;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.roaringbitmap.longlong.Roaring64NavigableMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Plans one chunker refresh: reads the view's state and the source's change set since the
 * watermark, and decides which parents are expanded and whose view rows are deleted.
 */
final class RefreshPlanner {
  private static final Logger LOG = LoggerFactory.getLogger(ChunkerRefresh.class);

  private RefreshPlanner() {}

  static PreparedRefresh prepare(ChunkerRun run, RefreshTarget target) {
    ViewTables t = run.t();
    ChunkerDefinition def = run.def();
    ChunkerFunctions.check(def.function().className(), def.function().batch());
    PreparedRefresh p = new PreparedRefresh(run, target.rebuild());
    // 1. the view's state at the version this refresh reads (and will commit on top of)
    long readVersion = target.view().version();
    Schema viewTable = target.view().schema();
    Map<String, String> config = target.view().config();
    p.viewRows = target.view().rows();
    long watermark = target.watermark();
    long srcVersion = target.srcVersion();
    // Without the watermark version the parents updated in place since cannot be told from
    // those a compaction moved (SourceHistory), so the processed set cannot be trusted.
    p.watermarkRemoved = target.watermarkRemoved();
    // The sets are read from a file when the config points to one; a rebuild needs only the
    // pointer (its commit releases the file two refreshes back). Sets that cannot be read make
    // a rebuild too: force (or a rebuild): nothing counts as processed, so every filtered
    // parent is expanded again, and the commit replaces every view row (including those of
    // truncated or gone parents).
    ParentState parents = ParentState.read(config, watermark, t.view(), !p.rebuild());
    p.stateLost = parents.lost;
    boolean force = p.rebuild();
    Roaring64NavigableMap processed = force ? ParentIds.empty() : parents.processed;
    Roaring64NavigableMap truncated = force ? ParentIds.empty() : parents.truncated;
    // Recorded by the commit so the next refresh can tell this source from a table created
    // later under the same name (SourceIdentity).
    String srcVersionTime = target.srcVersionWritten();

    Dataset<Row> source = ChunkerRefresh.read(run.spark(), t, srcVersion);
    ChunkerLayout layout = ChunkerRefresh.layout(source, def);
    layout.checkMatches(viewTable, t.viewName());

    // 2. which parents exist now, and which changed since the watermark
    long t0 = System.nanoTime();
    boolean mayScope = !force && run.o().outputLimit() == null
        && parents.allowsChangedFragmentsOnly();
    // Skipped parents are retried by id, wherever they are: the scoped scan does not read
    // their (unchanged) fragments otherwise.
    Roaring64NavigableMap retry = force || parents.skipped == null ? null : parents.skipped;
    SourceState state = SourceState.scan(new SourceState.Source(run.ctx(), t,
        target.datasets(), def.filter(),
        source), watermark, srcVersion, processed, retry,
        mayScope && run.ctx().listener().readChangedFragmentsOnly());
    Roaring64NavigableMap gone = state.gone;
    Roaring64NavigableMap changed = state.changed;
    Roaring64NavigableMap toExpand = state.toExpand;
    Roaring64NavigableMap deleteParents = ParentIds.or(ParentIds.or(gone, changed), truncated);
    long scanned = System.nanoTime();
    LOG.info("Chunker view {} (job {}): source version {} (watermark {}), scanned {}: {} "
        + "parents, {} to expand ({} changed), {} removed", t.viewName(), run.jobId(),
        srcVersion, watermark, state.scope, state.present.getLongCardinality(),
        toExpand.getLongCardinality(), changed.getLongCardinality(),
        gone.getLongCardinality());
    p.readVersion = readVersion;
    p.viewTable = viewTable;
    p.watermark = watermark;
    p.srcVersion = srcVersion;
    p.srcVersionTime = srcVersionTime;
    p.processed = processed;
    p.truncated = truncated;
    p.parents = parents;
    p.source = source;
    p.layout = layout;
    p.state = state;
    p.deleteParents = deleteParents;
    p.config = config;
    p.scanMillis = ChunkerRun.ms(t0, scanned);
    return p;
  }
}
