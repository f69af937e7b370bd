package io.lancerest.spark.mv.maintenance;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.commit.ViewCommitConflictException;
import io.lancerest.spark.mv.commit.ViewCommitResult;
import io.lancerest.spark.mv.layout.GenevaLayout;
import io.lancerest.spark.mv.rowindex.FragmentSourceRanges;
import io.lancerest.spark.mv.rowindex.SourceIdCollector;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

/**
 * Compaction of a view table by the view's own commit ({@link ViewCommit}), not lance-core's
 * {@code compact}: the live rows of a group of fragments are read and written again as one new
 * fragment, and one commit swaps them in.
 *
 * <p>Why not lance-core's compaction: with stable row ids (views have them) it carries the rows'
 * ids over, and for fragments with deletions writes them as sequences with holes, which make
 * lance-core 4.0.0's filtered scans and vector searches quadratic (the catalog then has to read
 * those fragments without push-down); and its new fragments lose the source row ranges a query
 * view's refresh looks rows up by. Here the new fragments get fresh, plain row ids, and each
 * gets the {@code __source_row_id} range of the rows it holds.
 *
 * <p>What to merge is size-tiered, so that a row is rewritten a few times over the view's life
 * rather than at every compaction: fragments are put in tiers by their live rows (powers of
 * {@value #FANOUT} above {@value #BASE_ROWS} rows), the smallest tiers are merged first, and
 * only as many tiers as it takes to get the view under its fragment bound. Fragments of half the
 * target size or more are full and never rewritten.
 */
final class ViewCompaction {
  static final int FANOUT = 4;
  static final long BASE_ROWS = 1024;
  /** Commits tried when other commits keep landing and leave the groups as they were. */
  static final int COMMIT_ATTEMPTS = 3;
  /** Field metadata of a column lance-core stores as blobs. */
  private static final String BLOB_KEY = "lance-encoding:blob";

  private ViewCompaction() {}

  /** A fragment as the planner sees it. */
  record Frag(int id, long rows) {}

  /**
   * The groups of fragments to merge, each into one fragment (ids in id order, each group at
   * most {@code target} rows and of two fragments or more).
   *
   * @param goal merge tiers, smallest first, until the view would have at most this many
   *     fragments; fragments below {@code smallRows} are merged whatever the goal
   * @param all merge every fragment that is not full, whatever its tier (OPTIMIZE)
   */
  static List<List<Integer>> plan(List<Frag> fragments, long target, int goal, long smallRows,
      boolean all) {
    long full = ViewMaintenance.fullRows(target);
    TreeMap<Integer, List<Frag>> tiers = new TreeMap<>();
    for (Frag f : fragments) {
      if (f.rows() < full) {
        tiers.computeIfAbsent(all ? 0 : tier(f.rows()), k -> new ArrayList<>()).add(f);
      }
    }
    int count = fragments.size();
    List<List<Integer>> groups = new ArrayList<>();
    for (List<Frag> tier : tiers.values()) {
      boolean small = tier.stream().allMatch(f -> f.rows() < smallRows);
      if (!all && !small && count <= goal) {
        break;
      }
      tier.sort(Comparator.comparingInt(Frag::id));
      List<Integer> group = new ArrayList<>();
      long rows = 0;
      for (Frag f : tier) {
        if (!group.isEmpty() && rows + f.rows() > target) {
          count -= close(group, groups);
          group = new ArrayList<>();
          rows = 0;
        }
        group.add(f.id());
        rows += f.rows();
      }
      count -= close(group, groups);
    }
    return groups;
  }

  private static int close(List<Integer> group, List<List<Integer>> groups) {
    if (group.size() < 2) {
      return 0;
    }
    groups.add(List.copyOf(group));
    return group.size() - 1;
  }

  static int tier(long rows) {
    int t = 0;
    for (long bound = BASE_ROWS * FANOUT; rows >= bound && t < 30; bound *= FANOUT) {
      t++;
    }
    return t;
  }

  /**
   * Rewrites each group of {@code ds} (opened at the version to compact) as one new fragment and
   * commits them in one view commit.
   *
   * @return the commit, or {@code null} when there is nothing to merge
   * @throws io.lancerest.spark.mv.commit.ViewCommitConflictException the view changed meanwhile
   */
  static ViewCommitResult run(Dataset ds, LanceLocation view, BufferAllocator allocator,
      List<List<Integer>> groups) {
    String uri = view.uri();
    if (groups.isEmpty()) {
      return null;
    }
    Schema schema = ds.getSchema();
    for (Field f : schema.getFields()) {
      if ("true".equals(f.getMetadata().get(BLOB_KEY))) {
        throw new IllegalStateException("column " + f.getName() + " is stored as a Lance blob, "
            + "which a scan returns as descriptions, not its bytes: this view is not compacted");
      }
    }
    // Query views look their rows up by these ranges (chunker and UDTF views do not)
    Map<String, String> meta = schema.getCustomMetadata() == null ? Map.of()
        : schema.getCustomMetadata();
    boolean ranges = schema.getFields().stream()
        .anyMatch(f -> f.getName().equals(GenevaLayout.SOURCE_ROW_ID))
        && (meta.containsKey(FragmentSourceRanges.KEY)
            || !meta.containsKey(GenevaLayout.CHUNKER) && !meta.containsKey(GenevaLayout.UDTF));
    List<FragmentMetadata> written = new ArrayList<>();
    List<FragmentSourceRanges.Range> writtenRanges = new ArrayList<>();
    List<Integer> removed = new ArrayList<>();
    Map<Integer, Long> live = new TreeMap<>();
    ds.getFragments().forEach(f -> live.put(f.getId(), f.metadata().getNumRows()));
    for (List<Integer> group : groups) {
      long rows = group.stream().mapToLong(live::get).sum();
      // every column: no projection (names are not parsed as nested paths)
      ScanOptions scan = new ScanOptions.Builder().fragmentIds(group).build();
      try (LanceScanner s = ds.newScan(scan);
          RangeTracking in = new RangeTracking(allocator, s.scanBatches(),
              ranges ? GenevaLayout.SOURCE_ROW_ID : null);
          ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
        Data.exportArrayStream(allocator, in, stream);
        List<FragmentMetadata> out = view.fragments().datasetUri(uri).allocator(allocator)
            .data(stream)
            .maxRowsPerFile((int) Math.min(Integer.MAX_VALUE, Math.max(rows, 1)))
            .execute();
        if (in.rows != rows) {
          throw new IllegalStateException("fragments " + group + " hold " + rows
              + " live rows but their scan gave " + in.rows + ": this view is not compacted");
        }
        written.addAll(out);
        if (ranges) {
          writtenRanges.addAll(in.ids.ranges(view, allocator, out, in.rows));
        }
        removed.addAll(group);
      } catch (RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IllegalStateException("reading fragments " + group + " failed: "
            + e.getMessage(), e);
      }
    }
    // A commit landing meanwhile (a refresh) makes this one conflict. When it left every
    // fragment of the groups as it was, the rewritten rows are still exactly theirs: commit on
    // top of it instead of throwing the work away.
    long readVersion = ds.version();
    Map<Integer, FragmentMetadata> inputs = new TreeMap<>();
    java.util.Set<Integer> removedIds = new java.util.HashSet<>(removed);
    ds.getFragments().forEach(f -> {
      if (removedIds.contains(f.getId())) {
        inputs.put(f.getId(), f.metadata());
      }
    });
    for (int attempt = 1; ; attempt++) {
      try {
        return ViewCommit.builder(view, readVersion)
            .removeFragments(removed)
            .addFragments(written, ranges ? writtenRanges : null)
            .transactionProperties(Map.of("lancerest.maintenance", "compaction"))
            .build()
            .commit();
      } catch (ViewCommitConflictException e) {
        if (attempt >= COMMIT_ATTEMPTS) {
          throw e;
        }
        try (Dataset latest = view.open(allocator, null)) {
          Map<Integer, FragmentMetadata> now = new TreeMap<>();
          latest.getFragments().forEach(f -> {
            if (inputs.containsKey(f.getId())) {
              now.put(f.getId(), f.metadata());
            }
          });
          if (!now.equals(inputs)) {
            throw e; // rows of the groups were deleted or moved meanwhile
          }
          readVersion = latest.version();
        }
      }
    }
  }

  /**
   * Hands a scan's batches on unchanged, counting its rows and collecting the values of one
   * BIGINT column (for the new fragments' ranges and indexes).
   */
  private static final class RangeTracking extends ArrowReader {
    private final ArrowReader in;
    private final String column;
    long rows;
    final SourceIdCollector ids = new SourceIdCollector();
    private boolean closed;

    RangeTracking(BufferAllocator allocator, ArrowReader in, String column) {
      super(allocator);
      this.in = in;
      this.column = column;
    }

    @Override
    public boolean loadNextBatch() throws IOException {
      if (!in.loadNextBatch()) {
        return false;
      }
      VectorSchemaRoot src = in.getVectorSchemaRoot();
      rows += src.getRowCount();
      if (column != null && src.getVector(column) instanceof BigIntVector v) {
        for (int i = 0; i < v.getValueCount(); i++) {
          if (v.isNull(i)) {
            ids.addNull();
          } else {
            ids.add(v.get(i));
          }
        }
      }
      try (ArrowRecordBatch batch = new VectorUnloader(src).getRecordBatch()) {
        loadRecordBatch(batch);
      }
      return true;
    }

    @Override
    public long bytesRead() {
      return in.bytesRead();
    }

    @Override
    protected void closeReadSource() throws IOException {
      // once by the stream's release when lance-core is done, once by the caller
      if (!closed) {
        closed = true;
        in.close();
      }
    }

    @Override
    protected Schema readSchema() throws IOException {
      return in.getVectorSchemaRoot().getSchema();
    }
  }
}
