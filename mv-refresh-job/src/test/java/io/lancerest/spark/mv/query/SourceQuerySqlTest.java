package io.lancerest.spark.mv.query;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lancerest.spark.mv.definition.Aggregation;
import io.lancerest.spark.mv.definition.SourceQuery;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The SQL rebuilt from an aggregate view's source query, HAVING names replaced. */
class SourceQuerySqlTest {
  @Test
  void havingNamesTheAggregatesAndKeysItsColumnsHold() {
    Aggregation a = new Aggregation(List.of(new SourceQuery.OutputColumn("uk", "upper(k1)"),
        new SourceQuery.OutputColumn("__agg_key_1", "k2")),
        List.of(new Aggregation.Call("sx", "sum", "x"),
            new Aggregation.Call("__agg_1", "max", "y"),
            new Aggregation.Call("n", "count", null)),
        "(__agg_1 > CAST(1 AS DOUBLE)) AND n > 2 AND __agg_key_1 = 1 AND uk <> 'A'");
    assertEquals(" GROUP BY (upper(k1)), (k2) HAVING ((((max(y) > CAST(1 AS DOUBLE)) AND "
        + "(count(1) > 2)) AND ((k2 = 1) AND (NOT (upper(k1) = 'A')))))",
        SourceQuerySql.groupByAndHaving(a));
  }
}
