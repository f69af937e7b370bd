package io.lancerest.spark.mv.query;

import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.CurrentCatalog;
import org.apache.spark.sql.catalyst.expressions.CurrentDatabase;
import org.apache.spark.sql.catalyst.expressions.CurrentDate;
import org.apache.spark.sql.catalyst.expressions.CurrentTimeZone;
import org.apache.spark.sql.catalyst.expressions.CurrentTimestampLike;
import org.apache.spark.sql.catalyst.expressions.CurrentUser;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.LocalTimestamp;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Sort;
import scala.collection.JavaConverters;

/**
 * The functions of the clock and of the session in a view's SELECT: {@code current_timestamp()}
 * and {@code now()}, {@code current_date()}, {@code localtimestamp()}, {@code
 * current_timezone()}, {@code current_user()}, {@code current_database()}, {@code
 * current_catalog()} and their aliases (Spark 3.5 names an alias, {@code user()}, {@code
 * curdate()}, {@code current_schema()} …, by its function).
 *
 * <p>Spark calls them deterministic, since they are one value within one query (the optimizer
 * replaces them by it), so a check of {@code deterministic()} lets them through. But a refresh
 * computes only the source rows that changed: the rows a view already holds keep the value of
 * the refresh that wrote them, and the view no longer equals its SELECT. A definition that uses
 * one is therefore refused at CREATE, whatever its kind, and so is every refresh of a view stored
 * with one ({@link StoredSelects}).
 */
final class CurrentLikeFunctions {
  private CurrentLikeFunctions() {}

  /**
   * Spark 3.5's expression classes of these functions, the ones its optimizer replaces by their
   * value ({@code TreePattern.CURRENT_LIKE}): {@code CurrentTimestampLike} is {@code
   * current_timestamp()} and {@code now()}; the others are one function each, under every alias.
   */
  private static final List<Class<? extends Expression>> CLASSES = List.of(
      CurrentTimestampLike.class, CurrentDate.class, LocalTimestamp.class,
      CurrentTimeZone.class, CurrentUser.class, CurrentDatabase.class, CurrentCatalog.class);

  /** Why a view cannot hold these functions (one sentence's end, no capital, no period). */
  private static final String WHY = "the view could not equal its SELECT after a refresh, "
      + "since a refresh computes only the source rows that changed and the rows the view holds "
      + "keep the value of an earlier one";

  /** One use: the function, and where the SELECT uses it ("WHERE", "column d" …). */
  private record Use(Expression function, String place) {
    /** {@code current_date() in WHERE}. */
    @Override
    public String toString() {
      return function.prettyName() + "() in " + place;
    }
  }

  /**
   * CREATE: refuses {@code plan} (an analyzed SELECT) when any of its steps uses one of the
   * functions.
   *
   * @throws InvalidViewDefinitionException naming the first function found, where, and what to
   *     write instead
   */
  static void refuse(LogicalPlan plan, String viewName) {
    Use use = first(plan);
    if (use == null) {
      return;
    }
    throw new InvalidViewDefinitionException("The SELECT of view " + viewName + " uses "
        + use + ", whose value changes between refreshes: " + WHY + ". "
        + capitalized(instead(viewName)));
  }

  /**
   * REFRESH: refuses {@code plan}, the analyzed SELECT of a stored view, when any of its steps
   * uses one of the functions. Such a view was stored without CREATE's check (by an earlier
   * version, or by another client), and every refresh would leave it further from its SELECT.
   *
   * @throws InvalidViewDefinitionException naming the view, the first function found, where,
   *     and that the view must be created again without it
   */
  static void refuseStored(LogicalPlan plan, String viewName) {
    Use use = first(plan);
    if (use == null) {
      return;
    }
    String f = use.function().prettyName() + "()";
    throw new InvalidViewDefinitionException("View " + viewName + " cannot be refreshed: its "
        + "SELECT uses " + use + ", whose value changes between refreshes: " + WHY + ". CREATE "
        + "refuses such a SELECT; this view was stored without that check, and nothing was "
        + "committed. Re-create the view without " + f + " (DROP MATERIALIZED VIEW " + viewName
        + ", then CREATE MATERIALIZED VIEW): " + instead(viewName));
  }

  /** What to write instead (no capital, no period). */
  private static String instead(String viewName) {
    return "compare with a literal you move yourself (e.g. ts > TIMESTAMP '2025-01-01 00:00:00', "
        + "re-creating the view to move it), or keep the rows in the view and filter or compute "
        + "at query time (e.g. SELECT * FROM " + viewName + " WHERE ts > current_timestamp() - "
        + "INTERVAL 7 DAYS)";
  }

  private static String capitalized(String s) {
    return Character.toUpperCase(s.charAt(0)) + s.substring(1);
  }

  /** The first use in {@code plan}, its steps from the top, each step's expressions in order. */
  private static Use first(LogicalPlan plan) {
    if (plan instanceof Aggregate a) {
      Use u = first(JavaConverters.seqAsJavaList(a.groupingExpressions()), "GROUP BY");
      if (u != null) {
        return u;
      }
    }
    for (Expression e : JavaConverters.seqAsJavaList(plan.expressions())) {
      Expression f = first(e);
      if (f != null) {
        return new Use(f, place(plan, e));
      }
    }
    for (LogicalPlan child : JavaConverters.seqAsJavaList(plan.children())) {
      Use u = first(child);
      if (u != null) {
        return u;
      }
    }
    return null;
  }

  private static Use first(List<Expression> expressions, String place) {
    for (Expression e : expressions) {
      Expression f = first(e);
      if (f != null) {
        return new Use(f, place);
      }
    }
    return null;
  }

  /** Where {@code e}, one of the expressions of {@code step}, stands in the SELECT. */
  private static String place(LogicalPlan step, Expression e) {
    if (step instanceof Filter f) {
      return f.child() instanceof Aggregate ? "HAVING" : "WHERE";
    }
    if (step instanceof Sort) {
      return "ORDER BY";
    }
    if (e instanceof NamedExpression ne) {
      return "column " + ne.name();
    }
    return "a " + step.nodeName() + " step";
  }

  private static Expression first(Expression e) {
    for (Class<? extends Expression> c : CLASSES) {
      if (c.isInstance(e)) {
        return e;
      }
    }
    for (Expression child : JavaConverters.seqAsJavaList(e.children())) {
      Expression f = first(child);
      if (f != null) {
        return f;
      }
    }
    return null;
  }
}
