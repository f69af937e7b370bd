package io.lancerest.spark.search;

import io.lancerest.spark.connector.search.SearchException;
import io.lancerest.spark.connector.search.TextSearchRequest;
import io.lancerest.spark.connector.search.VectorSearchRequest;
import io.lancerest.spark.connector.search.scan.SearchTable;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation$;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import scala.Function1;
import scala.Option;
import scala.Tuple3;
import scala.collection.JavaConverters;
import scala.collection.Seq;
import scala.runtime.AbstractFunction1;

/**
 * {@code vector_search} and {@code search}, the table functions the SQL extensions register,
 * shaped as lance-spark's newer {@code VECTOR_SEARCH} / {@code SEARCH}:
 *
 * <pre>
 * vector_search(table, query_vector [, k])                 -- the table's only vector column
 * vector_search(table, vector_column, query_vector [, k])
 *   named: nprobes =&gt; n, refine_factor =&gt; n, distance_type =&gt; 'l2'|'cosine'|'dot'
 * search(table, query [, k])                               -- the only full-text indexed column
 *   named: search_columns =&gt; array('body', ...)
 * </pre>
 *
 * Every argument may also be passed by name ({@code k => 10}); {@code k} defaults to 10. The
 * rows are the table's columns plus {@code _distance} (smallest first) or {@code _score}
 * (largest first).
 */
public final class SearchFunctions {
  static final String VECTOR = "vector_search";
  static final String TEXT = "search";
  private static final int DEFAULT_K = 10;

  private SearchFunctions() {}

  /** The two functions, as {@code SparkSessionExtensions.injectTableFunction} takes them. */
  public static List<Tuple3<FunctionIdentifier, ExpressionInfo,
      Function1<Seq<Expression>, LogicalPlan>>> all() {
    return List.of(
        describe(VECTOR, "_FUNC_(table, [vector_column,] query_vector [, k]) - the k rows of "
            + "table nearest to query_vector, with _distance", SearchFunctions::vector),
        describe(TEXT, "_FUNC_(table, query [, k]) - the k rows of table that best match query "
            + "by full-text search, with _score", SearchFunctions::text));
  }

  private static Tuple3<FunctionIdentifier, ExpressionInfo,
      Function1<Seq<Expression>, LogicalPlan>> describe(String name, String usage,
      java.util.function.Function<List<Expression>, LogicalPlan> build) {
    return new Tuple3<>(new FunctionIdentifier(name),
        new ExpressionInfo(SearchFunctions.class.getName(), null, name, usage, ""),
        new AbstractFunction1<Seq<Expression>, LogicalPlan>() {
          @Override
          public LogicalPlan apply(Seq<Expression> args) {
            return build.apply(JavaConverters.seqAsJavaList(args));
          }
        });
  }

  static LogicalPlan vector(List<Expression> args) {
    boolean columnFirst = args.size() > 1 && SearchArguments.isPositionalString(args.get(1));
    SearchArguments a = SearchArguments.of(VECTOR, args, columnFirst
            ? List.of("table", "vector_column", "query_vector", "k")
            : List.of("table", "query_vector", "k"),
        List.of("table", "vector_column", "query_vector", "k", "nprobes", "refine_factor",
            "distance_type"),
        Map.of("num_results", "k", "limit", "k", "column", "vector_column", "metric",
            "distance_type", "refine", "refine_factor"));
    String table = required(a, VECTOR, "table", a.string("table"));
    float[] key = required(a, VECTOR, "query_vector", a.floats("query_vector"));
    Integer k = a.integer("k");
    VectorSearchRequest r = new VectorSearchRequest(a.string("vector_column"), key,
        k == null ? DEFAULT_K : k, a.integer("nprobes"), a.integer("refine_factor"),
        a.string("distance_type"));
    return relation(VECTOR, table, planner -> planner.vector(r));
  }

  static LogicalPlan text(List<Expression> args) {
    SearchArguments a = SearchArguments.of(TEXT, args, List.of("table", "query", "k"),
        List.of("table", "query", "k", "search_columns"),
        Map.of("num_results", "k", "limit", "k", "search_query", "query", "column",
            "search_columns"));
    String table = required(a, TEXT, "table", a.string("table"));
    String query = required(a, TEXT, "query", a.string("query"));
    Integer k = a.integer("k");
    List<String> columns = a.strings("search_columns");
    TextSearchRequest r = new TextSearchRequest(query, columns == null ? List.of() : columns,
        k == null ? DEFAULT_K : k);
    return relation(TEXT, table, planner -> planner.text(r));
  }

  private static <T> T required(SearchArguments a, String function, String name, T value) {
    if (value == null) {
      throw new SearchException(function + ": argument '" + name + "' is missing" + (a.has(name)
          ? " (it is NULL)" : "") + "; e.g. " + (function.equals(VECTOR)
          ? "vector_search('lance.ns.items', 'vec', array(0.1, 0.2), 10)"
          : "search('lance.ns.docs', 'words', 10)") + ".");
    }
    return value;
  }

  private static LogicalPlan relation(String function, String table,
      java.util.function.Function<io.lancerest.spark.connector.search.SearchPlanner,
          io.lancerest.spark.connector.search.SearchPlan> planning) {
    SearchTarget target = SearchTarget.resolve(SparkSession.active(), function, table);
    SearchTable search = SearchTable.of(function, target.name(), target.table(), planning);
    return DataSourceV2Relation$.MODULE$.create(search, Option.empty(), Option.empty(),
        CaseInsensitiveStringMap.empty());
  }
}
