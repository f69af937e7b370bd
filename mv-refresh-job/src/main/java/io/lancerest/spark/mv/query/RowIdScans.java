package io.lancerest.spark.mv.query;

import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.layout.GenevaLayout;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.functions;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * The Spark scans of the row-scan path: the row ids of the filtered source (and those updated
 * since the watermark), then those of the view with the addresses of its rows to delete.
 */
record RowIdScans(RefreshContext ctx, ViewTables t, SourceQuery q) {
  /** What one view-scan task found. */
  record ViewPart(byte[] ids, long[] deletes) implements Serializable {}

  /** [ids of the filtered source, those of them updated after the watermark]. */
  Roaring64NavigableMap[] source(Dataset<Row> source, long watermark, boolean wantUpdated) {
    ctx.describe("scan source row ids");
    Dataset<Row> ids = QueryLayout.filtered(source, q).select(functions.col("_rowid"),
        wantUpdated ? functions.col("_row_last_updated_at_version")
            : functions.lit(0L).as("u"));
    List<byte[][]> parts = ids.queryExecution().toRdd().toJavaRDD()
        .mapPartitions((FlatMapFunction<Iterator<InternalRow>, byte[][]>) rows -> {
          Roaring64NavigableMap all = Roaring64NavigableMap.bitmapOf();
          Roaring64NavigableMap upd = Roaring64NavigableMap.bitmapOf();
          while (rows.hasNext()) {
            InternalRow r = rows.next();
            long id = r.getLong(0);
            all.addLong(id);
            // An unknown update version (NULL) counts as updated, as in WriteTask.keeping:
            // re-projecting a row that did not change only costs time, keeping a row that
            // did change leaves stale values in the view.
            if (wantUpdated && (r.isNullAt(1) || r.getLong(1) > watermark)) {
              upd.addLong(id);
            }
          }
          byte[][] out = {RowIdSet.serialize(all), RowIdSet.serialize(upd)};
          return java.util.Collections.singletonList(out).iterator();
        }).collect();
    Roaring64NavigableMap all = Roaring64NavigableMap.bitmapOf();
    Roaring64NavigableMap upd = Roaring64NavigableMap.bitmapOf();
    for (byte[][] p : parts) {
      all.or(RowIdSet.deserialize(p[0]));
      upd.or(RowIdSet.deserialize(p[1]));
    }
    return new Roaring64NavigableMap[] {all, watermark == 0 ? Roaring64NavigableMap.bitmapOf()
        : upd};
  }

  /**
   * Scans the view at {@code version}: fills {@code inView} with its source row ids and
   * {@code deletes} with the addresses of rows that are gone or changed.
   */
  void view(long version, Roaring64NavigableMap inSource, Roaring64NavigableMap updated,
      Roaring64NavigableMap inView, List<Long> deletes) {
    ctx.describe("scan view rows");
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(ctx.spark().sparkContext());
    Broadcast<byte[]> src = jsc.broadcast(RowIdSet.serialize(inSource));
    Broadcast<byte[]> upd = jsc.broadcast(RowIdSet.serialize(updated));
    List<ViewPart> parts;
    try {
      Dataset<Row> view = QueryLayout.readSource(ctx.spark(), t.view(),
          version).select(functions.col(GenevaLayout.SOURCE_ROW_ID), functions.col("_rowaddr"));
      parts = view.queryExecution().toRdd().toJavaRDD()
          .mapPartitions((FlatMapFunction<Iterator<InternalRow>, ViewPart>) rows -> {
            Roaring64NavigableMap s = RowIdSet.deserialize(src.value());
            Roaring64NavigableMap u = RowIdSet.deserialize(upd.value());
            Roaring64NavigableMap ids = Roaring64NavigableMap.bitmapOf();
            List<Long> del = new ArrayList<>();
            while (rows.hasNext()) {
              InternalRow r = rows.next();
              long id = r.getLong(0);
              ids.addLong(id);
              if (!s.contains(id) || u.contains(id)) {
                del.add(r.getLong(1));
              }
            }
            long[] d = del.stream().mapToLong(Long::longValue).toArray();
            return List.of(new ViewPart(RowIdSet.serialize(ids), d)).iterator();
          }).collect();
    } finally {
      src.destroy();
      upd.destroy();
    }
    for (ViewPart p : parts) {
      inView.or(RowIdSet.deserialize(p.ids));
      for (long a : p.deletes) {
        deletes.add(a);
      }
    }
  }
}
