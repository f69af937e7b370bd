package io.lancerest.spark.mv.server;

import io.lancerest.spark.mv.definition.Aggregation;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.parser.CatalystSqlParser$;
import scala.runtime.AbstractFunction1;

/**
 * The {@code GROUP BY … HAVING …} of an aggregate view's {@code source_query}, as SQL: the
 * service turns a definition into the SELECT a SQL CREATE would give and analyzes that, so a
 * definition sent over HTTP is checked exactly as one written in SQL.
 */
final class AggregateSql {
  private AggregateSql() {}

  static String groupByAndHaving(Aggregation a) {
    StringBuilder sql = new StringBuilder();
    Map<String, Expression> byName = new HashMap<>();
    for (int j = 0; j < a.groupBy().size(); j++) {
      String expr = a.groupBy().get(j).expr();
      sql.append(j == 0 ? " GROUP BY " : ", ").append('(').append(expr).append(')');
      byName.put(a.groupBy().get(j).name().toLowerCase(Locale.ROOT), parse(expr));
    }
    for (Aggregation.Call c : a.aggregates()) {
      byName.put(c.name().toLowerCase(Locale.ROOT), parse(c.function() + "("
          + (c.arg() == null ? "*" : c.arg()) + ")"));
    }
    if (a.having() != null) {
      // HAVING names the view's columns, hidden ones too; the SQL names what they hold
      sql.append(" HAVING (").append(substitute(parse(a.having()), byName).sql()).append(')');
    }
    return sql.toString();
  }

  private static Expression parse(String sql) {
    try {
      return CatalystSqlParser$.MODULE$.parseExpression(sql);
    } catch (RuntimeException e) {
      throw new InvalidViewDefinitionException("source_query aggregation has an expression "
          + "that is not Spark SQL: " + sql + " (" + e.getMessage().lines().findFirst()
          .orElse("") + ")");
    }
  }

  private static Expression substitute(Expression e, Map<String, Expression> byName) {
    if (e instanceof UnresolvedAttribute a && a.nameParts().size() == 1) {
      // nameParts, not name(): name() quotes a part that holds a dot
      Expression r = byName.get(a.nameParts().head().toLowerCase(Locale.ROOT));
      if (r != null) {
        return r;
      }
    }
    return e.mapChildren(new AbstractFunction1<Expression, Expression>() {
      @Override
      public Expression apply(Expression child) {
        return substitute(child, byName);
      }
    });
  }
}
