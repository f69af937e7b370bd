package io.lancerest.spark.connector.read;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.internal.connector.SupportsMetadata;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.lance.spark.read.LanceInputPartition;
import org.lance.spark.utils.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.collection.immutable.Map$;

/**
 * lance-spark's scan with its input partitions adjusted so that lance-core scans each fragment in
 * linear time ({@link FragmentHazard}); rows and columns are exactly lance-spark's.
 *
 * <ul>
 *   <li>A filtered read of a fragment with deletions also reads {@code _rowaddr} (lance-core then
 *       fetches late columns by address), and the reader drops it again.
 *   <li>A fragment a compaction rewrote gets no filter (Spark evaluates the filters: {@link
 *       SafeScanBuilder} handed them all back), and when {@code _rowid} is read, {@code _rowaddr}
 *       is read in its place and mapped to row ids through the fragment's sequence.
 * </ul>
 */
public final class SafeScan implements Scan, Batch, SupportsReportStatistics, SupportsMetadata {
  private static final Logger LOG = LoggerFactory.getLogger(SafeScan.class);
  static final String ROW_ID = "_rowid";
  static final String ROW_ADDRESS = "_rowaddr";
  static final String FRAGMENT_ID = "_fragid";

  private final Scan inner;
  private final TableFragments fragments;
  private final boolean filtersReturned;
  private final String table;
  private final Long credentialsExpireAt;

  SafeScan(Scan inner, TableFragments fragments, boolean filtersReturned, String table,
      Long credentialsExpireAt) {
    this.credentialsExpireAt = credentialsExpireAt;
    this.inner = inner;
    this.fragments = fragments;
    this.filtersReturned = filtersReturned;
    this.table = table;
  }

  /** lance-spark's scan, as built. */
  Scan inner() {
    return inner;
  }

  /** Whether Spark evaluates every filter again after this scan. */
  public boolean filtersReturned() {
    return filtersReturned;
  }

  public TableFragments fragments() {
    return fragments;
  }

  @Override
  public StructType readSchema() {
    return inner.readSchema();
  }

  @Override
  public String description() {
    String d = inner.description();
    TreeSet<Integer> rewritten = fragments.with(FragmentHazard.REWRITTEN_ROW_IDS);
    return rewritten.isEmpty() ? d : d + " [no Lance filter for rewritten fragments "
        + rewritten + "]";
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public ColumnarSupportMode columnarSupportMode() {
    return inner.columnarSupportMode();
  }

  @Override
  public org.apache.spark.sql.connector.metric.CustomMetric[] supportedCustomMetrics() {
    return inner.supportedCustomMetrics();
  }

  @Override
  public org.apache.spark.sql.connector.metric.CustomTaskMetric[] reportDriverMetrics() {
    return inner.reportDriverMetrics();
  }

  /**
   * The fragments an input partition of a Lance scan (lance-spark's or {@link SafeScan}'s)
   * reads, or {@code null} for any other partition.
   */
  public static List<Integer> fragmentsOf(InputPartition p) {
    if (p instanceof LanceInputPartition lp) {
      return lp.getLanceSplit().getFragments();
    }
    return p instanceof SafePartition sp ? sp.lance().getLanceSplit().getFragments() : null;
  }

  @Override
  public Statistics estimateStatistics() {
    if (inner instanceof SupportsReportStatistics s) {
      return s.estimateStatistics();
    }
    return new Statistics() {
      @Override
      public java.util.OptionalLong sizeInBytes() {
        return java.util.OptionalLong.empty();
      }

      @Override
      public java.util.OptionalLong numRows() {
        return java.util.OptionalLong.empty();
      }
    };
  }

  @Override
  @SuppressWarnings("unchecked")
  public scala.collection.immutable.Map<String, String> getMetaData() {
    if (inner instanceof SupportsMetadata m) {
      return m.getMetaData();
    }
    return (scala.collection.immutable.Map<String, String>) (Object) Map$.MODULE$.empty();
  }

  @Override
  public InputPartition[] planInputPartitions() {
    InputPartition[] planned = inner.toBatch().planInputPartitions();
    InputPartition[] out = new InputPartition[planned.length];
    int adjusted = 0;
    for (int i = 0; i < planned.length; i++) {
      out[i] = planned[i] instanceof LanceInputPartition lp ? adjust(lp) : planned[i];
      if (out[i] != planned[i]) {
        adjusted++;
      }
    }
    if (adjusted > 0) {
      LOG.debug("Scan of {} at version {}: {} of {} input partitions read on lance-core's "
          + "linear route", table, fragments.version(), adjusted, planned.length);
    }
    return out;
  }

  /** {@code p} as it is, or a {@link SafePartition} reading it the safe way. */
  private InputPartition adjust(LanceInputPartition p) {
    List<Integer> ids = p.getLanceSplit().getFragments();
    FragmentHazard hazard = fragments.hazard(ids);
    if (hazard == FragmentHazard.NONE || p.getPushedAggregation().isPresent()) {
      // a pushed aggregate is a COUNT(*), whose filtered scan fetches no column late; Spark
      // pushes none when the filters came back (rewritten fragments)
      return p;
    }
    StructType schema = p.getSchema();
    boolean nearest = p.getReadOptions().getNearest() != null;
    if (nearest && hazard == FragmentHazard.REWRITTEN_ROW_IDS) {
      throw rewrittenNearest(ids);
    }
    // A vector search fetches its k results' late columns by row id, filtered or not, and its
    // filter is a prefilter of the search, which Spark cannot apply after it.
    boolean filtered = p.getWhereCondition().isPresent() || nearest;
    boolean readsRowIds = indexOf(schema, ROW_ID) >= 0;
    boolean dropFilter = hazard == FragmentHazard.REWRITTEN_ROW_IDS && filtered;
    boolean mapRowIds = hazard == FragmentHazard.REWRITTEN_ROW_IDS && readsRowIds;
    boolean byAddress = hazard == FragmentHazard.DELETIONS && filtered;
    if (!dropFilter && !mapRowIds && !byAddress) {
      return p;
    }
    if (dropFilter && !filtersReturned) {
      // The fragments were classified at the version the scan is pinned to, so this cannot
      // happen; refusing is still better than a scan that never ends.
      throw new IllegalStateException("Scan of " + table + " version " + fragments.version()
          + ": fragments " + ids + " were rewritten by a compaction, but Spark does not evaluate "
          + "the filter " + p.getWhereCondition().get() + " again; run the query again");
    }
    if (dropFilter && (p.getLimit().isPresent() || p.getOffset().isPresent()
        || p.getTopNSortOrders().isPresent())) {
      throw new IllegalStateException("Scan of " + table + ": a limit was pushed with filters "
          + "that Spark evaluates again; run the query again");
    }
    // The columns lance-spark reads: without _rowid when it is mapped, with _rowaddr when it is
    // needed and not read anyway (lance-spark orders the batch columns itself, batchColumns).
    List<StructField> read = new ArrayList<>(Arrays.asList(schema.fields()));
    if (mapRowIds) {
      read.remove(indexOf(schema, ROW_ID));
    }
    boolean addedAddress = false;
    if ((mapRowIds || byAddress) && indexOf(schema, ROW_ADDRESS) < 0) {
      read.add(new StructField(ROW_ADDRESS, DataTypes.LongType, false, Metadata.empty()));
      addedAddress = true;
    }
    StructType readSchema = new StructType(read.toArray(new StructField[0]));
    List<String> got = batchColumns(readSchema);
    int address = got.indexOf(ROW_ADDRESS);
    // the batch lance-spark would have read for p, column by column: its index in the batches
    // read now, or -1 for _rowid (mapped from the column at `address`)
    List<String> wanted = batchColumns(schema);
    int[] layout = new int[wanted.size()];
    for (int i = 0; i < layout.length; i++) {
      String name = wanted.get(i);
      layout[i] = mapRowIds && name.equals(ROW_ID) ? -1 : got.indexOf(name);
    }
    Map<Integer, String> sequences = new HashMap<>();
    if (mapRowIds) {
      // every fragment of the split: the rows of one without hazard are mapped too
      for (Integer id : ids) {
        String meta = fragments.rowIdMeta().get(id);
        if (meta != null) {
          sequences.put(id, meta);
        }
      }
    }
    LanceInputPartition lance = new LanceInputPartition(readSchema, p.getPartitionId(),
        p.getLanceSplit(), p.getReadOptions(),
        dropFilter ? Optional.empty() : p.getWhereCondition(), p.getLimit(), p.getOffset(),
        p.getTopNSortOrders(), p.getPushedAggregation(), p.getScanId(),
        p.getInitialStorageOptions(), p.getNamespaceImpl(), p.getNamespaceProperties());
    if (!mapRowIds && !addedAddress) {
      return lance; // only the filter dropped: lance-spark reads it as it is
    }
    return new SafePartition(lance, layout, address, sequences);
  }

  /**
   * A vector search ({@code nearest}) over fragments a compaction rewrote: lance-core 4.0.0
   * computes the row id of every row for it in quadratic time, and there is no other route.
   */
  IllegalStateException rewrittenNearest(java.util.Collection<Integer> ids) {
    return new IllegalStateException("Vector search (nearest) on table " + table + " refused: "
        + "fragments " + new TreeSet<>(ids) + " were rewritten by a compaction that dropped "
        + "deleted rows, and lance-core 4.0.0 needs time quadratic in a fragment's rows for a "
        + "vector search of such a fragment (hours for a million rows; "
        + "docs/lance-core-scan-defect.md). Recreate the table (CREATE TABLE ... AS SELECT) "
        + "to give it plain row ids, or search without the nearest option");
  }

  /**
   * The columns of the batches lance-spark 0.4.0 reads for a partition schema, in their order:
   * the data columns in schema order, then those of {@code _rowid}, {@code _rowaddr}, {@code
   * _row_last_updated_at_version} and {@code _row_created_at_version} it asks lance-core for, in
   * that order ({@code LanceFragmentScanner.getColumnNames}), then the blob columns' virtual
   * {@code <col>__blob_pos} / {@code <col>__blob_size} in schema order, then {@code _fragid}, a
   * constant ({@code LanceFragmentColumnarBatchScanner}).
   */
  static List<String> batchColumns(StructType schema) {
    List<String> meta = List.of(ROW_ID, ROW_ADDRESS, "_row_last_updated_at_version",
        "_row_created_at_version");
    List<String> out = new ArrayList<>();
    List<String> blobs = new ArrayList<>();
    java.util.Set<String> names = new java.util.HashSet<>();
    for (StructField f : schema.fields()) {
      String n = f.name();
      names.add(n);
      if (n.endsWith("__blob_pos") || n.endsWith("__blob_size")) {
        blobs.add(n);
      } else if (!meta.contains(n) && !n.equals(FRAGMENT_ID)) {
        out.add(n);
      }
    }
    for (String m : meta) {
      if (names.contains(m)) {
        out.add(m);
      }
    }
    out.addAll(blobs);
    if (names.contains(FRAGMENT_ID)) {
      out.add(FRAGMENT_ID);
    }
    return out;
  }

  private static int indexOf(StructType schema, String name) {
    StructField[] fields = schema.fields();
    for (int i = 0; i < fields.length; i++) {
      if (fields[i].name().equals(name)) {
        return i;
      }
    }
    return -1;
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new SafeReaderFactory(inner.toBatch().createReaderFactory(), table,
        credentialsExpireAt);
  }
}
