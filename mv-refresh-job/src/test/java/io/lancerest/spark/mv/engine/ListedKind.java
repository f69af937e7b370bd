package io.lancerest.spark.mv.engine;

import io.lancerest.spark.mv.function.BatchUdtf;
import io.lancerest.spark.mv.function.Chunker;
import io.lancerest.spark.mv.function.UdtfContext;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Every view kind, listed once for the tests of the rules all kinds share ({@link
 * RefreshContractTest}, {@link KindRulesTest}, {@link StatementCallsTest}): a new kind gets
 * those tests by being listed here. Aggregate views are listed as a kind of their own: a query
 * view with GROUP BY is refreshed by another attempt (per-group state). Each definition reads
 * a source with columns {@code id, category, body, score}; {@code %s} is the source table.
 */
enum ListedKind {
  QUERY("AS SELECT id, upper(body) AS ub, score * 2 AS s2 FROM %s WHERE score > 2",
      "AS SELECT id, IF(body LIKE 'bad%%', raise_error(concat('bad body ', body)), body) AS b "
          + "FROM %s",
      null, "the view's SELECT"),
  CHUNKER("USING CHUNKER 'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS "
      + "(input_columns = 'body', chunk_size = 4, overlap = 0) AS SELECT id, body FROM %s",
      "USING CHUNKER '" + FailingWords.class.getName() + "' OPTIONS (name = 'failing', "
          + "input_columns = 'body'%s) AS SELECT id, body FROM %s",
      "", "chunker 'failing' (" + FailingWords.class.getName() + ")"),
  UDTF("USING UDTF 'io.lancerest.spark.mv.udtf.TopKUdtf' PARTITION BY category OPTIONS "
      + "(k = '2', order_by = 'score') AS SELECT category, id, score FROM %s",
      "USING UDTF '" + FailingCount.class.getName() + "' PARTITION BY category OPTIONS "
          + "(name = 'failing'%s) AS SELECT category, body FROM %s",
      "", "UDTF 'failing' (" + FailingCount.class.getName() + ")"),
  /** A query view with GROUP BY: refreshed from per-group state ({@code AggregateAttempt}). */
  AGGREGATE("AS SELECT category, count(*) AS n, sum(score) AS s, min(score) AS lo, "
      + "max(score) AS hi FROM %s GROUP BY category",
      "AS SELECT category, count(*) AS n, sum(IF(body LIKE 'bad%%', "
          + "CAST(raise_error(concat('bad body ', body)) AS INT), score)) AS s FROM %s "
          + "GROUP BY category",
      null, "the view's SELECT");

  /** Skips what fails instead of failing the refresh. */
  static final String SKIP = ", error_handling = '{\"format\":\"lancerest.error_handling.v1\","
      + "\"rules\":[{\"match\":\"IllegalStateException\",\"action\":\"skip\"}]}'";

  private final String definition;
  private final String failing;
  private final String options;
  /** What computes the view's rows, as a failure of it names it. */
  final String function;

  ListedKind(String definition, String failing, String options, String function) {
    this.definition = definition;
    this.failing = failing;
    this.options = options;
    this.function = function;
  }

  /**
   * A namespace of its own for this kind and a source table {@code src} in it, of 40 rows
   * ({@link #createSource}); returns the namespace.
   */
  String namespaceWithSource(EngineFixture f, String prefix) {
    String ns = f.namespace(prefix + "_" + name().toLowerCase(Locale.ROOT));
    createSource(f, "lance." + ns + ".src", 0);
    return ns;
  }

  /** The source every definition reads: ids {@code from} to {@code from + 39}. */
  static void createSource(EngineFixture f, String src, int from) {
    f.sql("CREATE TABLE " + src + " AS SELECT id, CAST(id % 3 AS STRING) AS category, "
        + "concat('w', CAST(id AS STRING), ' a b c d e f') AS body, CAST(id % 7 AS INT) AS score "
        + "FROM range(" + from + ", " + (from + 40) + ")");
  }

  /** The kind's usual definition over {@code source}. */
  String over(String source) {
    return String.format(definition, source);
  }

  /** A definition whose function throws on a row whose body starts with "bad". */
  String failingOver(String source) {
    return options == null ? String.format(failing, source)
        : String.format(failing, "", source);
  }

  /**
   * {@link #failingOver} with {@code error_handling} skipping what fails; {@code null} for a
   * kind without work items to skip (a query or aggregate view's failing row fails its
   * refresh).
   */
  String skippingOver(String source) {
    return skippingOver(source, "");
  }

  /** {@link #skippingOver} allowing no skip: a skip fails the refresh. */
  String skippingNoneOver(String source) {
    return skippingOver(source, ",\"max_skip_count\":0");
  }

  private String skippingOver(String source, String limit) {
    return options == null ? null : String.format(failing,
        SKIP.substring(0, SKIP.length() - 2) + limit + "}'", source);
  }

  /**
   * The work items {@code r} called the function for (computed or skipped): a chunker's parents
   * expanded, a UDTF's partitions not reused from a checkpoint; query views have none.
   */
  long itemsTried(io.lancerest.spark.mv.result.RefreshResult r) {
    return switch (this) {
      case QUERY, AGGREGATE -> 0;
      case CHUNKER -> r.details().get("parents_expanded");
      case UDTF -> r.details().get("partitions") - r.details().get("partitions_reused");
    };
  }

  /** Words of the body; throws on a body starting with "bad". */
  public static final class FailingWords implements Chunker {
    @Override
    public StructType outputSchema(Map<String, String> options, StructType inputSchema) {
      return new StructType().add("word", DataTypes.StringType);
    }

    @Override
    public Iterator<Row> chunk(Row input) {
      String body = input.getString(0);
      if (body != null && body.startsWith("bad")) {
        throw new IllegalStateException("bad body " + body);
      }
      return List.of(body.split(" ")).stream().map(w -> (Row) RowFactory.create(w)).iterator();
    }
  }

  /** Counts a partition's rows; throws on a body starting with "bad". */
  public static final class FailingCount implements BatchUdtf {
    @Override
    public StructType outputSchema(StructType input, Map<String, String> options) {
      return new StructType().add("category", DataTypes.StringType)
          .add("n", DataTypes.LongType, false);
    }

    @Override
    public Iterator<Row> process(UdtfContext ctx, Iterator<Row> rows) {
      long n = 0;
      while (rows.hasNext()) {
        Row r = rows.next();
        for (int i = 0; i < r.length(); i++) {
          if (r.get(i) instanceof String body && body.startsWith("bad")) {
            throw new IllegalStateException("bad body " + body);
          }
        }
        n++;
      }
      return List.of(RowFactory.create(ctx.partitionKey(), n)).iterator();
    }
  }
}
