package io.lancerest.spark.mv.sql;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.indexes.DatasetIndexes;
import io.lancerest.spark.mv.indexes.IndexSummary;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.lance.Dataset;
import org.lance.spark.LanceDataset;
import org.lance.spark.utils.Utils;

/**
 * {@code SHOW INDEXES FROM t}: one row per index of a Lance table (a view's included), its
 * segments taken together. Answered here rather than by lance-spark 0.4.0's statement, which
 * gives one row per segment (a vector index with delta segments appears several times) and needs
 * lance-spark's extension in the session. Its columns come first, unchanged, so that what read
 * them still reads them; {@code num_segments} follows.
 */
final class TableIndexes {
  /** lance-spark's columns (name, fields, index_type, the four counts), then ours. */
  static final StructType OUTPUT = new StructType()
      .add("name", DataTypes.StringType)
      .add("fields", DataTypes.createArrayType(DataTypes.StringType, true))
      .add("index_type", DataTypes.StringType)
      .add("num_indexed_fragments", DataTypes.LongType)
      .add("num_indexed_rows", DataTypes.LongType)
      .add("num_unindexed_fragments", DataTypes.LongType)
      .add("num_unindexed_rows", DataTypes.LongType)
      .add("num_segments", DataTypes.IntegerType, false);

  private TableIndexes() {}

  static List<Row> show(SparkSession spark, MvStatement.ShowIndexes s) {
    CatalogLanceTable target = CatalogLanceTable.resolve(spark, s.table());
    String what = "SHOW INDEXES FROM " + target.display();
    LanceDataset lance;
    try {
      lance = target.load(spark, what, "SHOW INDEXES lists the indexes of Lance tables");
    } catch (NoSuchTableException e) {
      // as Spark's analyzer answered it before this statement was ours
      throw MaterializedViewSqlParser.<RuntimeException>sneaky(e);
    }
    List<IndexSummary> indexes;
    try (Dataset ds = Utils.openDataset(lance.readOptions())) {
      indexes = DatasetIndexes.list(ds);
    } catch (RuntimeException e) {
      throw new MaterializedViewException(what + ": cannot list the indexes of its Lance "
          + "dataset: " + LanceLocation.withoutUserInfo(String.valueOf(e.getMessage())), e);
    }
    List<Row> rows = new ArrayList<>();
    for (IndexSummary i : indexes) {
      rows.add(RowFactory.create(i.name(), i.columns(), i.type(), i.fragmentsIndexed(),
          i.rowsIndexed(), i.fragmentsUnindexed(), i.rowsUnindexed(), i.segments()));
    }
    return rows;
  }
}
