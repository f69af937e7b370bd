package io.lancerest.spark.mv.query;

import static io.lancerest.spark.mv.query.QueryRefresh.LOG;

import io.lancerest.spark.mv.fragments.DeletionVectors;
import io.lancerest.spark.mv.fragments.FragmentScopedRead;
import io.lancerest.spark.mv.fragments.SourceChanges;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.lance.FragmentMetadata;
import org.roaringbitmap.RoaringBitmap;
import scala.collection.JavaConverters;

/**
 * The rows that left the source since the watermark, as they were at the watermark version:
 * what an aggregate view subtracts from its groups.
 *
 * <p>A row deleted from a fragment that kept its data files (a DELETE, or lance-spark's UPDATE,
 * which deletes the old row and writes the new one elsewhere) is found by its place: an offset
 * its fragment's deletion file gained since the watermark. Those rows are read on the driver,
 * only the columns the definition reads: by their offsets from the fragment's data file ({@link
 * PlacedRows}), or, where the file does not allow that, from a plain scan of the fragment at
 * the watermark version keeping the rows at those places ({@link DriverRows}): no Spark job, no
 * {@code _rowid}, no filter handed to Lance.
 * Fragments whose rows all left (compaction input, fragments emptied or rewritten), fragments
 * whose deletion files cannot be read directly (an object store), rows that came back, and
 * more departed rows than {@value LocalRefreshWrite#MAX_ROWS_CONF} are read by a Spark scan of
 * those fragments at the watermark version instead, keeping the departed rows.
 */
final class DepartedRows {
  private DepartedRows() {}

  /**
   * The departed rows found so far: those picked on the driver ({@code null} when none could
   * be) and the fragments whose departed rows only a Spark scan at the watermark finds.
   */
  record Picked(List<Row> rows, Set<Integer> scanned) {
    boolean complete() {
      return rows != null && scanned.isEmpty();
    }
  }

  /**
   * The departed rows as changes ({@link AggregateState#changes} with sign -1).
   *
   * @param picked what {@link #pick} found
   * @param then the source at the watermark version, read through lance-spark (opened only
   *     when some fragment is scanned in Spark)
   * @param inDeparted the filter that keeps the departed rows of a scan ({@code _rowid} in the
   *     set)
   */
  static Dataset<Row> changes(RefreshContext ctx, Picked picked, AggregateState st,
      StructType columns, java.util.function.Supplier<Dataset<Row>> then,
      org.apache.spark.sql.Column inDeparted) {
    Dataset<Row> out = picked.rows() == null ? null
        : st.changes(ctx.spark().createDataFrame(picked.rows(), columns), -1);
    if (!picked.scanned().isEmpty()) {
      Dataset<Row> scan = st.changes(FragmentScopedRead.restrict(then.get(), picked.scanned())
          .where(inDeparted), -1);
      out = out == null ? scan : out.unionByName(scan);
    }
    return out;
  }

  /**
   * The departed rows that can be had on the driver, by their places ({@link PlacedRows}, else
   * a plain scan of their fragments), and the fragments left to a Spark scan.
   *
   * @param columns the source columns the definition reads ({@link #columnsRead}), or {@code
   *     null} when they cannot be picked on the driver
   */
  static Picked pick(RefreshContext ctx, ViewTables t, RefreshStart s, SourceChanges ch,
      StructType columns) {
    Set<Integer> scanned = new HashSet<>(ch.diff.replaced);
    Map<Integer, RoaringBitmap> offsets = new HashMap<>();
    List<Row> fetched = null;
    long maxRows = LocalRefreshWrite.conf(ctx.spark(), LocalRefreshWrite.MAX_ROWS_CONF,
        LocalRefreshWrite.DEFAULT_MAX_ROWS);
    if (columns != null && maxRows > 0 && !ch.diff.deletionsChanged.isEmpty()) {
      try (BufferAllocator a = new RootAllocator()) {
        org.lance.Dataset old = s.datasets.source(s.watermark);
        Map<Integer, FragmentMetadata> nowById = new HashMap<>();
        s.sourceAt.forEach(f -> nowById.put(f.getId(), f));
        DeletionVectors.Reader dv = ctx.deletionVectors();
        long rows = 0;
        for (int id : ch.diff.deletionsChanged) {
          FragmentMetadata before = old.getFragment(id).metadata();
          RoaringBitmap was = before.getDeletionFile() == null ? new RoaringBitmap()
              : dv.read(old.uri(), before);
          FragmentMetadata after = nowById.get(id);
          RoaringBitmap is = after == null || after.getDeletionFile() == null ? null
              : dv.read(old.uri(), after);
          if (was == null || is == null || !RoaringBitmap.andNot(was, is).isEmpty()) {
            scanned.add(id); // not local, or rows came back: the scan tells
            continue;
          }
          RoaringBitmap left = RoaringBitmap.andNot(is, was);
          offsets.put(id, left);
          rows += left.getLongCardinality();
        }
        if (rows > maxRows) {
          LOG.info("View {} (job {}): {} departed rows > {} = {}; scanning their fragments",
              t.viewName(), ctx.jobId(), rows, LocalRefreshWrite.MAX_ROWS_CONF, maxRows);
          scanned.addAll(offsets.keySet());
        } else if (!offsets.isEmpty()) {
          fetched = pick(ctx, a, t, old, offsets, columns);
          if (fetched == null) {
            scanned.addAll(offsets.keySet());
          }
        }
      } catch (Exception e) {
        LOG.info("View {} (job {}): departed rows not picked on the driver ({}); scanning their "
            + "fragments", t.viewName(), ctx.jobId(), e.toString());
        fetched = null;
        scanned.addAll(ch.diff.deletionsChanged);
      }
    } else {
      scanned.addAll(ch.diff.deletionsChanged);
    }
    return new Picked(fetched, scanned);
  }

  /**
   * The source columns the definition reads (every column an expression above the read
   * references, the filter's included), or {@code null} when it reads a metadata column, which
   * a fetch by place does not give.
   */
  static StructType columnsRead(AggregateState st, Dataset<Row> source) {
    Set<String> used = new java.util.LinkedHashSet<>();
    references(st.changes(source, -1).queryExecution().analyzed(), used);
    List<StructField> fields = new ArrayList<>();
    StructType all = source.schema();
    for (StructField f : all.fields()) {
      if (used.contains(f.name())) {
        if (f.name().startsWith("_")) {
          return null;
        }
        fields.add(f);
      }
    }
    return fields.isEmpty() ? null : new StructType(fields.toArray(new StructField[0]));
  }

  private static void references(LogicalPlan p, Set<String> out) {
    for (Attribute a : JavaConverters.seqAsJavaList(p.references().toSeq())) {
      out.add(a.name());
    }
    for (LogicalPlan c : JavaConverters.seqAsJavaList(p.children())) {
      references(c, out);
    }
  }

  /**
   * The rows at {@code offsets} (fragment id → physical offsets) as they are at this version:
   * read by place where the fragment allows ({@link PlacedRows}), else picked from a plain scan
   * of the fragment with its row addresses; {@code null} when a column reads with another type
   * than through lance-spark. Not lance-core's {@code take}: with stable row ids it builds the
   * dataset's row-id index, which takes minutes on fragments with deletions.
   */
  private static List<Row> pick(RefreshContext ctx, BufferAllocator a, ViewTables t,
      org.lance.Dataset old, Map<Integer, RoaringBitmap> offsets, StructType columns)
      throws Exception {
    long t0 = System.currentTimeMillis();
    List<org.lance.schema.LanceField> schema = old.getLanceSchema().fields();
    List<Row> rows = new ArrayList<>();
    Map<Integer, RoaringBitmap> scan = new HashMap<>();
    for (Map.Entry<Integer, RoaringBitmap> e : new java.util.TreeMap<>(offsets).entrySet()) {
      List<Row> placed;
      try {
        placed = PlacedRows.read(a, t.source(), schema, old.getFragment(e.getKey()).metadata(),
            e.getValue(), columns);
      } catch (Exception unreadable) {
        // e.g. a file format the reader does not take: this fragment is scanned instead
        LOG.info("View {} (job {}): departed rows of fragment {} not read by place ({})",
            ctx.viewName(), ctx.jobId(), e.getKey(), unreadable.toString());
        placed = null;
      }
      if (placed == null) {
        scan.put(e.getKey(), e.getValue());
      } else {
        rows.addAll(placed);
      }
    }
    if (!scan.isEmpty()) {
      List<Row> scanned = DriverRows.read(old, new ArrayList<>(new java.util.TreeSet<>(
          scan.keySet())), columns, false, address -> {
            RoaringBitmap wanted = scan.get((int) (address >>> 32));
            return wanted != null && wanted.contains((int) address);
          });
      if (scanned == null) {
        return null;
      }
      rows.addAll(scanned);
    }
    LOG.info("View {} (job {}): {} departed rows picked from {} fragments at source version {} "
        + "({} by place, {} by a scan of their fragments) in {} ms", ctx.viewName(),
        ctx.jobId(), rows.size(), offsets.size(), old.version(), offsets.size() - scan.size(),
        scan.size(), System.currentTimeMillis() - t0);
    return rows;
  }
}
