package io.lancerest.spark.mv.query;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.BasePredicate;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Predicate$;
import org.apache.spark.sql.catalyst.expressions.Unevaluable;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.types.StructType;
import scala.collection.JavaConverters;
import scala.collection.Seq;

/**
 * A chain of Spark projections and filters over rows of known columns, compiled once and run
 * over rows the driver holds: Spark's own expressions (casts, functions, UDFs, the WHERE) with
 * no plan made per batch of rows and no job. Built from the analyzed plan of the chain over an
 * empty local relation; {@link #of} gives {@code null} when the chain holds anything else (a
 * join, an aggregate), an expression only a Spark job evaluates, or a non-deterministic one.
 */
final class LocalProjection {
  /** Bottom-up: a filter or a projection, bound to the output of the stage below. */
  private final List<Object> stages;
  private final scala.Function1<Object, Object> toInternal;
  private final scala.Function1<Object, Object> toRow;
  private final StructType schema;

  private LocalProjection(List<Object> stages, StructType input, StructType schema) {
    this.stages = stages;
    this.toInternal = CatalystTypeConverters.createToCatalystConverter(input);
    this.toRow = CatalystTypeConverters.createToScalaConverter(schema);
    this.schema = schema;
  }

  /** The output columns. */
  StructType schema() {
    return schema;
  }

  /**
   * {@code chain} applied to rows of {@code input}, compiled, or {@code null} when it is not a
   * chain of projections and filters that the driver can evaluate as Spark does.
   */
  static LocalProjection of(SparkSession spark, StructType input,
      java.util.function.UnaryOperator<Dataset<Row>> chain) {
    Dataset<Row> out = chain.apply(spark.createDataFrame(List.of(), input));
    List<LogicalPlan> nodes = new ArrayList<>();
    // The analyzed plan still holds expressions the optimizer swaps for their implementation
    // (nvl, left, to_date...), which cannot be evaluated as they are; and fixes the statement
    // time once, as a Spark job's plan has it.
    LogicalPlan p = out.queryExecution().analyzed();
    p = org.apache.spark.sql.catalyst.optimizer.ReplaceExpressions$.MODULE$.apply(p);
    p = org.apache.spark.sql.catalyst.optimizer.ComputeCurrentTime$.MODULE$.apply(p);
    while (p instanceof Project || p instanceof Filter || p instanceof SubqueryAlias) {
      if (!(p instanceof SubqueryAlias)) {
        nodes.add(p);
      }
      p = p.children().head();
    }
    if (!(p instanceof LocalRelation)) {
      return null;
    }
    List<Object> stages = new ArrayList<>();
    for (int i = nodes.size() - 1; i >= 0; i--) {
      LogicalPlan node = nodes.get(i);
      @SuppressWarnings("unchecked")
      List<Expression> exprs = node instanceof Project project
          ? (List<Expression>) (List<?>) JavaConverters.seqAsJavaList(project.projectList())
          : List.of(((Filter) node).condition());
      for (Expression e : exprs) {
        if (!e.deterministic() || unevaluable(e)) {
          return null;
        }
      }
      Seq<Attribute> in = node.children().head().output();
      if (node instanceof Filter) {
        BasePredicate pred = Predicate$.MODULE$.create(exprs.get(0), in);
        pred.initialize(0);
        stages.add(pred);
      } else {
        UnsafeProjection proj = UnsafeProjection.create(
            JavaConverters.asScalaBuffer(exprs).toSeq(), in);
        proj.initialize(0);
        stages.add(proj);
      }
    }
    return new LocalProjection(stages, input, out.schema());
  }

  private static boolean unevaluable(Expression e) {
    if (e instanceof Unevaluable && !(e instanceof AttributeReference)
        || e instanceof org.apache.spark.sql.catalyst.expressions.RuntimeReplaceable) {
      return true;
    }
    for (Expression c : JavaConverters.seqAsJavaList(e.children())) {
      if (unevaluable(c)) {
        return true;
      }
    }
    return false;
  }

  /** The chain over {@code rows}, appended to {@code out}. Not thread-safe. */
  void apply(List<Row> rows, List<Row> out) {
    for (Row r : rows) {
      InternalRow row = (InternalRow) toInternal.apply(r);
      boolean kept = true;
      for (Object st : stages) {
        if (st instanceof BasePredicate pred) {
          if (!pred.eval(row)) {
            kept = false;
            break;
          }
        } else {
          row = ((UnsafeProjection) st).apply(row);
        }
      }
      if (kept) {
        out.add((Row) toRow.apply(row));
      }
    }
  }
}
