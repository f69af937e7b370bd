package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.function.BatchUdtf;
import io.lancerest.spark.mv.function.OptionValues;
import io.lancerest.spark.mv.function.UdtfContext;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Shipped example: the top {@code k} rows of each partition by one column, with their rank.
 *
 * <pre>
 * CREATE MATERIALIZED VIEW lance.shop.top3 USING UDTF 'io.lancerest.spark.mv.udtf.TopKUdtf'
 *   PARTITION BY category OPTIONS (k = '3', order_by = 'price')
 *   AS SELECT category, name, price FROM lance.shop.items
 * </pre>
 *
 * <p>Options: {@code order_by} (required; a numeric, string, date or timestamp column), {@code k}
 * (a positive whole number, default 10), {@code descending} ({@code true} or {@code false},
 * default true), {@code rank_column} (default {@code rank}, not an input column); any other
 * option is refused at CREATE.
 * Ties keep the row seen first; NULL ranks after every value. The output schema is the input
 * schema plus {@code rank int32 NOT NULL} (1 = best); a declared output schema may instead pick
 * any subset of the input columns, by name, plus the rank column.
 *
 * <p>Memory: a heap of {@code k} rows per call, whatever the partition's size.
 */
public final class TopKUdtf implements BatchUdtf {
  private static final String K = "a positive whole number";
  /** The options this class reads, plus output_schema (which the engine may leave in them). */
  private static final Set<String> OPTIONS = Set.of("order_by", "k", "descending",
      "rank_column", UdtfViews.OUTPUT_SCHEMA_OPTION);

  @Override
  public void validate(StructType inputSchema, Map<String, String> options) {
    OptionValues.onlyKnown(options, "TopKUdtf", OPTIONS);
    List<String> columns = List.of(inputSchema.fieldNames());
    String orderBy = options.get("order_by");
    String orderByAllowed = "the input column to rank by, one of " + columns;
    if (orderBy == null || orderBy.isBlank()) {
      throw new InvalidOptionException("order_by", null, orderByAllowed);
    }
    if (!columns.contains(orderBy)) {
      throw new InvalidOptionException("order_by", orderBy, orderByAllowed);
    }
    OptionValues.wholeNumber(options, "k", 1, K);
    OptionValues.bool(options, "descending");
    String rank = options.get("rank_column");
    if (rank != null && (rank.isBlank() || columns.contains(rank))) {
      throw new InvalidOptionException("rank_column", rank, "a column name that is not an input "
          + "column " + columns);
    }
  }

  @Override
  public StructType outputSchema(StructType inputSchema, Map<String, String> options) {
    String rank = options.getOrDefault("rank_column", "rank");
    return inputSchema.add(new StructField(rank, DataTypes.IntegerType, false,
        org.apache.spark.sql.types.Metadata.empty()));
  }

  @Override
  public Iterator<Row> process(UdtfContext context, Iterator<Row> rows) {
    validate(context.inputSchema(), context.options());
    String orderBy = context.options().get("order_by");
    int orderIndex = context.inputSchema().fieldIndex(orderBy);
    Integer kOption = OptionValues.wholeNumber(context.options(), "k", 1, K);
    int k = kOption == null ? 10 : kOption;
    Boolean descendingOption = OptionValues.bool(context.options(), "descending");
    boolean descending = descendingOption == null || descendingOption;
    String rankColumn = context.option("rank_column", "rank");

    // Better-first comparator over (value, arrival); the heap keeps the worst on top.
    @SuppressWarnings({"unchecked", "rawtypes"})
    Comparator<Object> values = (a, b) -> ((Comparable) a).compareTo(b);
    Comparator<Object> byValue = Comparator.nullsLast(descending ? values.reversed() : values);
    Comparator<Ranked> better = Comparator.<Ranked, Object>comparing(r -> r.value, byValue)
        .thenComparingLong(r -> r.arrival);
    PriorityQueue<Ranked> heap = new PriorityQueue<>(Math.max(1, k), better.reversed());
    long arrival = 0;
    while (rows.hasNext()) {
      Row row = rows.next();
      Ranked r = new Ranked(row.get(orderIndex), arrival++, row);
      if (heap.size() < k) {
        heap.add(r);
      } else if (k > 0 && better.compare(r, heap.peek()) < 0) {
        heap.poll();
        heap.add(r);
      }
    }
    List<Ranked> best = new ArrayList<>(heap);
    best.sort(better);

    StructType out = context.outputSchema();
    int[] source = new int[out.size()];
    for (int i = 0; i < source.length; i++) {
      String name = out.fields()[i].name();
      source[i] = name.equals(rankColumn) ? -1 : context.inputSchema().fieldIndex(name);
    }
    List<Row> result = new ArrayList<>(best.size());
    for (int i = 0; i < best.size(); i++) {
      Object[] values2 = new Object[source.length];
      for (int c = 0; c < source.length; c++) {
        values2[c] = source[c] < 0 ? Integer.valueOf(i + 1) : best.get(i).row.get(source[c]);
      }
      result.add(RowFactory.create(values2));
    }
    return result.iterator();
  }

  private record Ranked(Object value, long arrival, Row row) {}
}
