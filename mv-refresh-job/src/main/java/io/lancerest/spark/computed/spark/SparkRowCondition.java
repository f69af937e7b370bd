package io.lancerest.spark.computed.spark;

import io.lancerest.spark.computed.ComputedColumnException;
import io.lancerest.spark.computed.RowCondition;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BindReferences;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import scala.collection.JavaConverters;

/**
 * A {@code where} compiled by Spark's analyzer against the table's columns and bound to the
 * columns it reads, so that tasks evaluate it on the rows they read (no filter reaches
 * lance-core).
 */
final class SparkRowCondition implements RowCondition {
  private static final long serialVersionUID = 1L;
  private final List<String> columns;
  private final Expression bound;

  private SparkRowCondition(List<String> columns, Expression bound) {
    this.columns = List.copyOf(columns);
    this.bound = bound;
  }

  /**
   * Compiles {@code where} against {@code schema}.
   *
   * @throws ComputedColumnException it does not parse, names an unknown column or is not a
   *     condition
   */
  static RowCondition compile(SparkSession spark, String table, String column, String where,
      Schema schema) {
    StructType st = LanceArrowUtils.fromArrowSchema(schema);
    LogicalPlan plan;
    try {
      Dataset<Row> df = spark.createDataFrame(new ArrayList<Row>(), st).where(where);
      plan = df.queryExecution().analyzed();
    } catch (Exception e) { // ParseException and AnalysisException are checked in Scala's eyes
      throw new ComputedColumnException("Backfill of column '" + column + "' of table " + table
          + ": WHERE " + where + " is not a condition on the table's columns: "
          + firstLine(e.getMessage()) + ". Correct it; nothing was computed.", e);
    }
    if (!(plan instanceof Filter f)) {
      throw new ComputedColumnException("Backfill of column '" + column + "' of table " + table
          + ": WHERE " + where + " is not a row condition. Correct it; nothing was computed.");
    }
    Expression cond = f.condition();
    List<Attribute> attrs = new ArrayList<>(JavaConverters.seqAsJavaList(
        cond.references().toSeq()));
    List<String> names = new ArrayList<>();
    attrs.forEach(a -> names.add(a.name()));
    Expression bound = BindReferences.bindReference(cond,
        org.apache.spark.sql.catalyst.expressions.package$.MODULE$.AttributeSeq(
            JavaConverters.asScalaBuffer(attrs).toSeq()), false);
    return new SparkRowCondition(names, bound);
  }

  private static String firstLine(String m) {
    if (m == null) {
      return "";
    }
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }

  @Override
  public List<String> columns() {
    return columns;
  }

  @Override
  public boolean test(InternalRow row) {
    return Boolean.TRUE.equals(bound.eval(row));
  }
}
