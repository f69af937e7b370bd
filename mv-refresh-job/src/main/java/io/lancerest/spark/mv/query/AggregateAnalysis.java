package io.lancerest.spark.mv.query;

import io.lancerest.spark.mv.definition.Aggregation;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.layout.GenevaLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction;
import org.apache.spark.sql.catalyst.expressions.aggregate.Average;
import org.apache.spark.sql.catalyst.expressions.aggregate.Complete$;
import org.apache.spark.sql.catalyst.expressions.aggregate.Count;
import org.apache.spark.sql.catalyst.expressions.aggregate.Max;
import org.apache.spark.sql.catalyst.expressions.aggregate.Min;
import org.apache.spark.sql.catalyst.expressions.aggregate.Sum;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.util.QuotingUtils;
import scala.collection.JavaConverters;
import scala.runtime.AbstractFunction1;

/**
 * The aggregate form of a query view's SELECT: {@code SELECT <keys and aggregates> FROM <one
 * table> [WHERE …] GROUP BY <keys> [HAVING …]}, with count, sum, avg, min and max, none DISTINCT
 * or FILTERed: the aggregates whose value follows from per-group state that rows arriving and
 * leaving update ({@link AggregateState}). Each SELECT column is a grouping key or one aggregate
 * call; anything else is refused here with what to write instead.
 */
final class AggregateAnalysis {
  private AggregateAnalysis() {}

  /** What {@link #split} found: the Aggregate node and what stands above it. */
  record Shape(Aggregate aggregate, Expression having, List<NamedExpression> output) {}

  /**
   * The aggregate at the top of {@code plan}, with its HAVING and final column list, or {@code
   * null} when the plan does not start with one.
   */
  static Shape split(LogicalPlan plan) {
    LogicalPlan p = plan;
    List<NamedExpression> output = null;
    Expression having = null;
    if (p instanceof Project project && project.child() instanceof Filter f
        && f.child() instanceof Aggregate) {
      output = JavaConverters.seqAsJavaList(project.projectList());
      p = f;
    }
    if (p instanceof Filter f && f.child() instanceof Aggregate) {
      having = f.condition();
      p = f.child();
    }
    if (!(p instanceof Aggregate agg)) {
      return null;
    }
    if (output == null) {
      output = new ArrayList<>();
      for (NamedExpression ne : JavaConverters.seqAsJavaList(agg.aggregateExpressions())) {
        output.add(ne.toAttribute());
      }
    }
    return new Shape(agg, having, output);
  }

  /**
   * The first subquery or nondeterministic expression in the grouping keys, the aggregates'
   * arguments or HAVING, described; else {@code null}.
   */
  static String forbiddenExpression(Shape shape) {
    List<Expression> all = new ArrayList<>(JavaConverters.seqAsJavaList(
        shape.aggregate().groupingExpressions()));
    for (NamedExpression ne : JavaConverters.seqAsJavaList(
        shape.aggregate().aggregateExpressions())) {
      Expression e = ne instanceof Alias a ? a.child() : (Expression) ne;
      // keys are among the grouping expressions; other columns are refused by analyze
      if (e instanceof AggregateExpression ae) {
        all.addAll(JavaConverters.seqAsJavaList(ae.aggregateFunction().children()));
      }
    }
    if (shape.having() != null) {
      all.add(shape.having());
    }
    for (Expression e : all) {
      String s = SelectAnalysis.forbiddenExpression(e);
      if (s != null) {
        return s;
      }
    }
    return null;
  }

  /**
   * The view's projection (SELECT order) and its {@link Aggregation}.
   *
   * @param shape what {@link #split} found
   */
  static Result analyze(Shape shape, String viewName) {
    Aggregate agg = shape.aggregate();
    List<Expression> keys = JavaConverters.seqAsJavaList(agg.groupingExpressions());
    String[] keyNames = new String[keys.size()];
    List<Aggregation.Call> calls = new ArrayList<>();
    Map<ExprId, String> names = new HashMap<>();
    Map<ExprId, String> exprs = new HashMap<>();
    List<String> visible = new ArrayList<>();
    for (NamedExpression ne : shape.output()) {
      visible.add(ne.toAttribute().exprId().toString());
    }
    for (NamedExpression ne : JavaConverters.seqAsJavaList(agg.aggregateExpressions())) {
      Expression e = ne instanceof Alias a ? a.child() : (Expression) ne;
      boolean shown = visible.contains(ne.toAttribute().exprId().toString());
      String name = ne.name();
      if (shown) {
        checkName(name, viewName);
      }
      int key = keyIndex(keys, e);
      if (key >= 0) {
        if (keyNames[key] != null) {
          throw new InvalidViewDefinitionException("The SELECT of view " + viewName
              + " holds grouping key " + SelectAnalysis.sqlOf(keys.get(key), viewName, "")
              + " twice (" + keyNames[key] + ", " + name + "); select it once");
        }
        keyNames[key] = shown ? name : Aggregation.hiddenKey(key);
        names.put(ne.toAttribute().exprId(), keyNames[key]);
        exprs.put(ne.toAttribute().exprId(), SelectAnalysis.sqlOf(keys.get(key), viewName, ""));
        continue;
      }
      Aggregation.Call call = call(e, shown ? name : Aggregation.hiddenValue(calls.size()),
          viewName, name);
      calls.add(call);
      names.put(ne.toAttribute().exprId(), call.name());
      exprs.put(ne.toAttribute().exprId(), call.function() + "(" + (call.arg() == null ? "*"
          : call.arg()) + ")");
    }
    List<SourceQuery.OutputColumn> groupBy = new ArrayList<>();
    for (int j = 0; j < keys.size(); j++) {
      if (!keys.get(j).deterministic()) {
        throw new InvalidViewDefinitionException("Grouping key " + keys.get(j).sql()
            + " of view " + viewName + " is nondeterministic");
      }
      groupBy.add(new SourceQuery.OutputColumn(keyNames[j] == null ? Aggregation.hiddenKey(j)
          : keyNames[j], SelectAnalysis.sqlOf(keys.get(j), viewName, "GROUP BY")));
    }
    if (calls.isEmpty()) {
      throw new InvalidViewDefinitionException("The SELECT of view " + viewName + " groups "
          + "rows but computes no aggregate; a view of distinct keys needs one, e.g. "
          + "count(*) AS n");
    }
    List<SourceQuery.OutputColumn> projection = new ArrayList<>();
    for (NamedExpression ne : shape.output()) {
      String name = names.get(ne.toAttribute().exprId());
      if (name == null) {
        throw new InvalidViewDefinitionException("Column " + ne.name() + " of view " + viewName
            + " is not a grouping key or an aggregate of the GROUP BY");
      }
      projection.add(new SourceQuery.OutputColumn(ne.name(), exprs.get(
          ne.toAttribute().exprId())));
    }
    String having = shape.having() == null ? null : renamed(shape.having(), names, viewName);
    return new Result(projection, new Aggregation(groupBy, calls, having));
  }

  /** The projection and grouping of an aggregate view. */
  record Result(List<SourceQuery.OutputColumn> projection, Aggregation aggregation) {}

  private static void checkName(String name, String viewName) {
    String n = name.toLowerCase(Locale.ROOT);
    if (Aggregation.hidden(n) || n.equals(GenevaLayout.SOURCE_ROW_ID)
        || n.equals(GenevaLayout.IS_SET)) {
      throw new InvalidViewDefinitionException("Column " + name + " of view " + viewName
          + " has a name the view keeps for itself (" + Aggregation.HIDDEN_PREFIX + "…, "
          + GenevaLayout.SOURCE_ROW_ID + ", " + GenevaLayout.IS_SET + "); give it another alias");
    }
  }

  private static int keyIndex(List<Expression> keys, Expression e) {
    for (int j = 0; j < keys.size(); j++) {
      if (keys.get(j).semanticEquals(e)) {
        return j;
      }
    }
    return -1;
  }

  /** One supported aggregate call, or the refusal that names it. */
  private static Aggregation.Call call(Expression e, String name, String viewName,
      String column) {
    if (!(e instanceof AggregateExpression ae)) {
      String what = SelectAnalysis.stripQualifiers(e).sql();
      throw new InvalidViewDefinitionException("Column " + column + " of view " + viewName
          + " (" + abbreviate(what) + ") is neither a grouping key nor one aggregate call. "
          + "An aggregate view keeps each aggregate as a column of its own: select the "
          + "aggregates (e.g. sum(x) AS s, count(x) AS n) and compute expressions over them "
          + "when you read the view");
    }
    AggregateFunction f = ae.aggregateFunction();
    String sql = abbreviate(SelectAnalysis.stripQualifiers(ae).sql());
    if (ae.isDistinct()) {
      throw notMaintained(sql, viewName, "a DISTINCT aggregate needs every distinct value of "
          + "the group to tell whether a departing row was the last one with its value");
    }
    if (ae.filter().isDefined()) {
      throw notMaintained(sql, viewName, "an aggregate with FILTER is not maintained; move the "
          + "condition into WHERE, or into the argument (sum(CASE WHEN … THEN x END))");
    }
    if (!(ae.mode() == Complete$.MODULE$)) {
      throw notMaintained(sql, viewName, "an aggregate in mode " + ae.mode());
    }
    String fn;
    if (f instanceof Count c) {
      List<Expression> args = JavaConverters.seqAsJavaList(c.children());
      if (args.size() == 1 && args.get(0) instanceof Literal lit && lit.value() != null) {
        return new Aggregation.Call(name, "count", null);
      }
      if (args.size() != 1) {
        throw notMaintained(sql, viewName, "count of several columns");
      }
      return new Aggregation.Call(name, "count", arg(args.get(0), viewName, column));
    } else if (f instanceof Sum s) {
      requireLegacyOrAnsi(s.evalMode().toString(), sql, viewName);
      fn = "sum";
    } else if (f instanceof Average a) {
      requireLegacyOrAnsi(a.evalMode().toString(), sql, viewName);
      fn = "avg";
    } else if (f instanceof Min) {
      fn = "min";
    } else if (f instanceof Max) {
      fn = "max";
    } else {
      throw notMaintained(sql, viewName, f.prettyName() + " is not one of count, sum, avg, "
          + "min, max");
    }
    Expression child = f.children().head();
    String type = child.dataType().typeName();
    if ((fn.equals("sum") || fn.equals("avg")) && !(child.dataType()
        instanceof org.apache.spark.sql.types.NumericType)) {
      throw notMaintained(sql, viewName, fn + " of " + type + " (only numeric sums are kept)");
    }
    return new Aggregation.Call(name, fn, arg(child, viewName, column));
  }

  private static void requireLegacyOrAnsi(String mode, String sql, String viewName) {
    if (mode.equalsIgnoreCase("TRY")) {
      throw notMaintained(sql, viewName, "try_sum / try_avg (write sum / avg)");
    }
  }

  private static String arg(Expression e, String viewName, String column) {
    if (!e.deterministic()) {
      throw new InvalidViewDefinitionException("The argument of column " + column + " of view "
          + viewName + " is nondeterministic (" + e.sql() + ")");
    }
    if (e instanceof AttributeReference a) {
      return QuotingUtils.quoteIfNeeded(a.name());
    }
    return SelectAnalysis.sqlOf(e, viewName, "column " + column);
  }

  private static InvalidViewDefinitionException notMaintained(String sql, String viewName,
      String why) {
    return new InvalidViewDefinitionException("View " + viewName + " uses " + sql + ", which "
        + "an aggregate view cannot maintain incrementally: " + why + ". Every refresh would "
        + "need a full recomputation; materialize it with CREATE TABLE … AS SELECT (and "
        + "CREATE OR REPLACE TABLE to refresh it) instead");
  }

  /** {@code having} as Spark SQL over the view's column names. */
  private static String renamed(Expression having, Map<ExprId, String> names, String viewName) {
    Expression e = rename(having, names, viewName);
    return SelectAnalysis.stripQualifiers(e).sql();
  }

  private static Expression rename(Expression e, Map<ExprId, String> names, String viewName) {
    if (e instanceof AttributeReference a) {
      String n = names.get(a.exprId());
      if (n == null) {
        throw new InvalidViewDefinitionException("The HAVING of view " + viewName + " uses "
            + a.name() + ", which is not a grouping key or an aggregate of the view");
      }
      return a.withName(n);
    }
    if (e instanceof AggregateExpression) {
      throw new InvalidViewDefinitionException("The HAVING of view " + viewName + " uses "
          + e.sql() + " directly; select it as a column");
    }
    return e.mapChildren(new AbstractFunction1<Expression, Expression>() {
      @Override
      public Expression apply(Expression child) {
        return rename(child, names, viewName);
      }
    });
  }

  private static String abbreviate(String s) {
    return s.length() <= 80 ? s : s.substring(0, 80) + "…";
  }
}
