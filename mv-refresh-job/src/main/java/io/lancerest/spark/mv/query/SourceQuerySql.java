package io.lancerest.spark.mv.query;

import io.lancerest.spark.mv.definition.Aggregation;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.parser.CatalystSqlParser$;
import scala.runtime.AbstractFunction1;

/**
 * A {@link SourceQuery} as the SELECT a SQL {@code CREATE} would give: a definition given as a
 * source query (the Java API's, the view service's {@code source_query}) is analyzed by {@link
 * SelectAnalysis} like one written in SQL, so it is checked exactly as that one is; a stored one
 * is analyzed again before a refresh ({@link StoredSelects}).
 */
public final class SourceQuerySql {
  private SourceQuerySql() {}

  /**
   * {@code SELECT … FROM <catalog>.<table> [WHERE …] [GROUP BY … HAVING …] [LIMIT n]}.
   *
   * @param table the source table's identifier relative to {@code catalog}
   */
  public static String select(SourceQuery q, String catalog, List<String> table) {
    List<String> from = new ArrayList<>();
    from.add(catalog);
    from.addAll(table);
    return select(q, from);
  }

  /** {@code SELECT … FROM <from> …}: {@code from} is the table's name, part by part. */
  static String select(SourceQuery q, List<String> from) {
    StringBuilder sql = new StringBuilder("SELECT ");
    if (q.projection().isEmpty()) {
      sql.append('*');
    } else {
      for (int i = 0; i < q.projection().size(); i++) {
        SourceQuery.OutputColumn c = q.projection().get(i);
        sql.append(i == 0 ? "" : ", ").append('(').append(c.expr()).append(") AS ")
            .append(quote(c.name()));
      }
    }
    sql.append(" FROM ");
    for (int i = 0; i < from.size(); i++) {
      sql.append(i == 0 ? "" : ".").append(quote(from.get(i)));
    }
    if (q.filter() != null) {
      sql.append(" WHERE (").append(q.filter()).append(')');
    }
    if (q.aggregation() != null) {
      sql.append(groupByAndHaving(q.aggregation()));
    }
    if (q.limit() != null) {
      sql.append(" LIMIT ").append(q.limit());
    }
    return sql.toString();
  }

  /** The {@code GROUP BY … HAVING …} of an aggregate view's query. */
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

  private static String quote(String name) {
    return "`" + name.replace("`", "``") + "`";
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
