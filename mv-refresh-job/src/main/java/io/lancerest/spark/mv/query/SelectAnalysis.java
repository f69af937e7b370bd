package io.lancerest.spark.mv.query;

import io.lancerest.spark.mv.definition.Aggregation;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.expressions.WindowExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Distinct;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.Generate;
import org.apache.spark.sql.catalyst.plans.logical.GlobalLimit;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LocalLimit;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.SetOperation;
import org.apache.spark.sql.catalyst.plans.logical.Sort;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.plans.logical.Window;
import org.apache.spark.sql.catalyst.util.QuotingUtils;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.types.StructType;
import scala.collection.JavaConverters;
import scala.runtime.AbstractFunction1;

/**
 * Turns the SELECT of a {@code CREATE MATERIALIZED VIEW} into a {@link SourceQuery}, with Spark's
 * own parser and analyzer: names are resolved as in any query of the session, then the analyzed
 * plan must be {@code [LIMIT n] SELECT <expressions> FROM <one table> [WHERE <predicate>]}.
 *
 * <p>The stored expressions are the analyzed ones printed back as Spark SQL with table
 * qualifiers removed ({@code s.title} becomes {@code title}), so they read against the source
 * table alone; the engine re-applies them at every refresh.
 */
public final class SelectAnalysis {
  private SelectAnalysis() {}

  /**
   * What the SELECT reads and computes.
   *
   * @param catalogName the catalog the source table was resolved in
   * @param sourceIdent the source table in that catalog (catalog-relative)
   * @param projection output columns in order
   * @param filter the WHERE predicate, or {@code null}
   * @param limit the LIMIT, or {@code null}
   * @param outputSchema the SELECT's columns as Spark analyzed them
   * @param aggregation the grouping of an aggregate view ({@link AggregateAnalysis}), or {@code
   *     null}
   */
  public record Analyzed(String catalogName, Identifier sourceIdent,
      List<SourceQuery.OutputColumn> projection, String filter, Long limit,
      StructType outputSchema, Aggregation aggregation) {
    /** The catalog-relative identifier of the source (namespace parts, then name). */
    public List<String> sourceRelativeId() {
      List<String> id = new ArrayList<>(Arrays.asList(sourceIdent.namespace()));
      id.add(sourceIdent.name());
      return id;
    }
  }

  /**
   * Parses and analyzes {@code selectSql}.
   *
   * @param kind the view's kind: query views must be 1:1 with filtered source rows
   * @throws MaterializedViewNotFoundException the source table does not exist
   * @throws InvalidViewDefinitionException the SELECT is not one a view of {@code kind} can hold
   */
  public static Analyzed analyze(SparkSession spark, String selectSql, MaterializedViewKind kind,
      String viewName) {
    LogicalPlan plan;
    try {
      plan = spark.sql(selectSql).queryExecution().analyzed();
    } catch (RuntimeException e) {
      throw translate(e, selectSql, viewName);
    } catch (Exception e) {
      // AnalysisException is a checked exception to javac but thrown unchecked by Scala.
      throw translate(e, selectSql, viewName);
    }
    // Before the shape checks, whose advice (deterministic expressions, one table) does not
    // fit a function Spark deems deterministic
    CurrentLikeFunctions.refuse(plan, viewName);
    AggregateAnalysis.Shape grouped = kind == MaterializedViewKind.QUERY
        ? AggregateAnalysis.split(plan) : null;
    if (grouped != null) {
      String below = forbiddenShape(grouped.aggregate().child());
      if (below != null) {
        throw new InvalidViewDefinitionException("The SELECT of view " + viewName + " uses "
            + below + " below its GROUP BY. An aggregate view groups the rows of ONE source "
            + "table: SELECT <keys>, <aggregates> FROM <table> [WHERE <predicate>] GROUP BY "
            + "<keys> [HAVING <predicate>]");
      }
      String inside = AggregateAnalysis.forbiddenExpression(grouped);
      if (inside != null) {
        throw new InvalidViewDefinitionException("The SELECT of view " + viewName + " uses "
            + inside + " in its GROUP BY, aggregates or HAVING; an aggregate view keeps each "
            + "group's state from its rows alone, so every expression must be deterministic "
            + "and read only the source row");
      }
      AggregateAnalysis.Result r = AggregateAnalysis.analyze(grouped, viewName);
      Source from = source(grouped.aggregate().child(), viewName);
      return new Analyzed(from.rel.catalog().get().name(), from.rel.identifier().get(),
          r.projection(), from.filter, null, plan.schema(), r.aggregation());
    }
    String shape = forbiddenShape(plan);
    if (shape != null) {
      throw new InvalidViewDefinitionException("The SELECT of " + kind.wire() + " view "
          + viewName + " uses " + shape + ". A materialized view reads ONE source table: "
          + (kind == MaterializedViewKind.QUERY
              ? "a query view is 1:1 with the filtered source rows (SELECT <expressions> FROM "
                  + "<table> [WHERE <predicate>] [LIMIT n]) or groups them (SELECT <keys>, "
                  + "<count/sum/avg/min/max> FROM <table> [WHERE …] GROUP BY <keys> [HAVING …]), "
                  + "so it can be refreshed incrementally. Materialize the result with CREATE "
                  + "TABLE … AS SELECT instead"
              : "give the columns and filter, and let the function do the rest"));
    }
    Long limit = null;
    LogicalPlan p = plan;
    if (p instanceof GlobalLimit g) {
      limit = literalLong(g.limitExpr(), viewName);
      p = g.child();
    }
    if (p instanceof LocalLimit l) {
      limit = limit == null ? literalLong(l.limitExpr(), viewName) : limit;
      p = l.child();
    }
    if (!(p instanceof Project project)) {
      throw unsupported(viewName, p);
    }
    Source from = source(project.child(), viewName);
    List<SourceQuery.OutputColumn> projection = new ArrayList<>();
    for (NamedExpression ne : JavaConverters.seqAsJavaList(project.projectList())) {
      String expr;
      if (ne instanceof Alias a) {
        expr = sqlOf(a.child(), viewName, "column " + a.name());
      } else if (ne instanceof Attribute attr) {
        expr = QuotingUtils.quoteIfNeeded(attr.name());
      } else {
        throw new InvalidViewDefinitionException("Column " + ne.name() + " of view " + viewName
            + " is not an expression over the source columns");
      }
      projection.add(new SourceQuery.OutputColumn(ne.name(), expr));
    }
    return new Analyzed(from.rel.catalog().get().name(), from.rel.identifier().get(),
        projection, from.filter, limit, plan.schema(), null);
  }

  /** The table a SELECT reads and its WHERE. */
  private record Source(DataSourceV2Relation rel, String filter) {}

  /** {@code [WHERE …] FROM <table>}: the part under the projection or the GROUP BY. */
  private static Source source(LogicalPlan p, String viewName) {
    String filter = null;
    if (p instanceof Filter f) {
      filter = sqlOf(f.condition(), viewName, "WHERE");
      p = f.child();
    }
    // Table aliases (FROM t AS s) are SubqueryAlias nodes straight over the relation.
    LogicalPlan below = p;
    while (below instanceof SubqueryAlias a) {
      below = a.child();
    }
    if (below instanceof DataSourceV2Relation) {
      p = below;
    }
    if (!(p instanceof DataSourceV2Relation rel) || rel.catalog().isEmpty()
        || rel.identifier().isEmpty()) {
      throw p instanceof Project || p instanceof Filter || p instanceof SubqueryAlias
          ? new InvalidViewDefinitionException("The SELECT of view " + viewName + " reads from a "
              + "subquery; a materialized view reads one table directly (FROM <table>)")
          : unsupported(viewName, p);
    }
    return new Source(rel, filter);
  }

  private static RuntimeException translate(Exception e, String sql, String viewName) {
    if (e instanceof AnalysisException ae && ae.getErrorClass() != null
        && ae.getErrorClass().startsWith("TABLE_OR_VIEW_NOT_FOUND")) {
      return new MaterializedViewNotFoundException("The source table of view " + viewName
          + " does not exist: " + ae.getSimpleMessage(), e);
    }
    if (e instanceof RuntimeException re && !(e instanceof AnalysisException)
        && !(e.getClass().getName().contains("ParseException"))) {
      return re;
    }
    String msg = e instanceof AnalysisException ae ? ae.getSimpleMessage() : e.getMessage();
    return new InvalidViewDefinitionException("The SELECT of view " + viewName
        + " is not valid: " + msg, e);
  }

  /** The first join, aggregate, window, subquery, ... in the plan, described; else null. */
  static String forbiddenShape(LogicalPlan plan) {
    if (plan instanceof Join) {
      return "a join";
    }
    if (plan instanceof Aggregate || plan instanceof Distinct) {
      return "an aggregate (GROUP BY, DISTINCT or an aggregate function)";
    }
    if (plan instanceof Window) {
      return "a window function";
    }
    if (plan instanceof Generate) {
      return "a generator (explode, LATERAL VIEW), which makes several rows of one source row";
    }
    if (plan instanceof SetOperation) {
      return "a set operation (UNION, INTERSECT, EXCEPT)";
    }
    if (plan instanceof Sort) {
      return "ORDER BY, which a materialized view does not keep (sort when you read it)";
    }
    for (Expression e : JavaConverters.seqAsJavaList(plan.expressions())) {
      String s = forbiddenExpression(e);
      if (s != null) {
        return s;
      }
    }
    for (LogicalPlan child : JavaConverters.seqAsJavaList(plan.children())) {
      String s = forbiddenShape(child);
      if (s != null) {
        return s;
      }
    }
    return null;
  }

  static String forbiddenExpression(Expression e) {
    if (e instanceof SubqueryExpression) {
      return "a subquery (" + abbreviate(e.sql()) + ")";
    }
    if (e instanceof AggregateExpression) {
      return "an aggregate (" + abbreviate(e.sql()) + ")";
    }
    if (e instanceof WindowExpression) {
      return "a window function (" + abbreviate(e.sql()) + ")";
    }
    if (!e.deterministic() && e.children().isEmpty()) {
      return "a nondeterministic expression (" + e.prettyName() + "), whose value would change "
          + "at every refresh";
    }
    if (e.getClass().getSimpleName().equals("Rand") || e.getClass().getSimpleName()
        .equals("Randn") || e.getClass().getSimpleName().equals("Uuid")
        || e.getClass().getSimpleName().equals("Shuffle")) {
      return "a nondeterministic expression (" + e.prettyName() + "), whose value would change "
          + "at every refresh";
    }
    for (Expression c : JavaConverters.seqAsJavaList(e.children())) {
      String s = forbiddenExpression(c);
      if (s != null) {
        return s;
      }
    }
    return null;
  }

  private static InvalidViewDefinitionException unsupported(String viewName, LogicalPlan p) {
    return new InvalidViewDefinitionException("The SELECT of view " + viewName + " has a '"
        + p.nodeName() + "' step a materialized view cannot hold; write SELECT <expressions> "
        + "FROM <one table of the catalog> [WHERE <predicate>]");
  }

  private static Long literalLong(Expression e, String viewName) {
    if (e instanceof Literal lit && lit.value() instanceof Number n) {
      return n.longValue();
    }
    throw new InvalidViewDefinitionException("LIMIT of view " + viewName
        + " must be a number, got " + e.sql());
  }

  /** Spark SQL of an analyzed expression, table qualifiers removed. */
  static String sqlOf(Expression e, String viewName, String where) {
    return stripQualifiers(e).sql();
  }

  static Expression stripQualifiers(Expression e) {
    if (e instanceof org.apache.spark.sql.catalyst.expressions.RuntimeReplaceable r) {
      // nvl, ifnull, nullif... print their original arguments, which are not their children
      // (qualifiers would stay in the SQL): what they are replaced by means the same
      return stripQualifiers(r.replacement());
    }
    if (e instanceof AttributeReference a) {
      return a.withQualifier(JavaConverters.asScalaBuffer(new ArrayList<String>()).toList());
    }
    return e.mapChildren(new AbstractFunction1<Expression, Expression>() {
      @Override
      public Expression apply(Expression child) {
        return stripQualifiers(child);
      }
    });
  }

  private static String abbreviate(String s) {
    return s.length() <= 80 ? s : s.substring(0, 80) + "…";
  }
}
