package io.lancerest.spark.mv.query;

import org.apache.spark.sql.catalyst.expressions.UserDefinedExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import scala.collection.JavaConverters;

/**
 * User-defined functions in a plan. What a plan that calls one computes is not fixed by the
 * definition's text: the function can be registered again under its name with another body, or
 * dropped, so that the name means a built-in function again.
 */
final class UserDefinedFunctions {
  private UserDefinedFunctions() {}

  /** Whether any step of {@code plan} calls a user-defined function (Scala, Java, Python, Hive). */
  static boolean calledBy(LogicalPlan plan) {
    return plan.exists(node -> JavaConverters.seqAsJavaList(node.expressions()).stream()
        .anyMatch(e -> e.exists(x -> x instanceof UserDefinedExpression)));
  }
}
