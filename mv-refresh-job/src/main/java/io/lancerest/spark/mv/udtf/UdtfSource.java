package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.fragments.LanceReads;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;

/**
 * The source of one UDTF refresh attempt at one version: where the Lance table is (for its
 * vector index) and how to read the source query's rows.
 *
 * @param reader produces the source query's output at {@code version} (projection and filter
 *     applied); with {@code withRowId} it must also carry the source's {@code _rowid}
 */
record UdtfSource(LanceLocation table, long version, Reader reader) {

  String location() {
    return table.uri();
  }

  /** Storage options hold credentials: only their keys are shown. */
  @Override
  public String toString() {
    return "UdtfSource{" + table + " @" + version + "}";
  }

  /** Reads the source query's rows. */
  @FunctionalInterface
  interface Reader {
    Dataset<Row> read(SparkSession spark, boolean withRowId);
  }

  UdtfSource {
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(reader, "reader");
  }

  /** The source query of view {@code t} over its source at {@code version}. */
  static UdtfSource query(ViewTables t, SourceQuery q, long version) {
    return new UdtfSource(t.source(), version,
        (spark, withRowId) -> projected(spark, t, version, q, withRowId));
  }

  /**
   * The source query's rows (filter, limit and projection applied), optionally with _rowid.
   * A LIMIT keeps the first {@code n} filtered rows in {@code _rowid} order, as query views do:
   * a bare Spark limit takes whichever rows its tasks return first, so a rebuild of the same
   * source version could see other rows.
   */
  private static Dataset<Row> projected(SparkSession spark, ViewTables t, long version,
      SourceQuery q, boolean withRowId) {
    Dataset<Row> df = LanceReads.load(spark, t.source(), version);
    if (q.filter() != null) {
      df = df.where(q.filter());
    }
    if (q.limit() != null) {
      if (q.limit() > Integer.MAX_VALUE) {
        throw new InvalidViewDefinitionException("The source query of view " + t.viewName()
            + " has LIMIT " + q.limit() + "; a function view can take at most "
            + Integer.MAX_VALUE + " source rows (recreate it with a smaller LIMIT or none)");
      }
      // Sorted by an expression, not the bare column: lance-spark 0.4 would push a top-n on
      // _rowid into its scanner, which has no such column ("Column _rowid not found").
      df = df.orderBy(df.col("_rowid").plus(0)).limit(q.limit().intValue());
    }
    if (q.projection().isEmpty()) {
      return withRowId ? df.select(df.col("*"), df.col("_rowid")) : df;
    }
    List<Column> cols = new ArrayList<>();
    for (SourceQuery.OutputColumn c : q.projection()) {
      cols.add(functions.expr(c.expr()).as(c.name()));
    }
    if (withRowId) {
      cols.add(functions.col("_rowid"));
    }
    return df.select(cols.toArray(Column[]::new));
  }
}
