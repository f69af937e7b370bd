package io.lancerest.spark.mv.query;

import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.api.java.UDF1;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * Whether a {@code _rowid} is in a set shipped to the executors: a filter Spark evaluates
 * after the scan. A UDF on purpose: an {@code IN} list would be pushed down to Lance, whose
 * filtered scans lance-core 4.0.0 can make quadratic (docs/lance-core-scan-defect.md).
 */
final class RowIdMembership implements UDF1<Long, Boolean> {
  private static final long serialVersionUID = 1L;
  private final Broadcast<byte[]> ids;
  private transient Roaring64NavigableMap set;

  RowIdMembership(Broadcast<byte[]> ids) {
    this.ids = ids;
  }

  @Override
  public Boolean call(Long id) {
    if (set == null) {
      set = RowIdSet.deserialize(ids.value());
    }
    return id != null && set.contains(id);
  }
}
