package io.lancerest.examples.custom;

import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.function.BatchUdtf;
import io.lancerest.spark.mv.function.OptionValues;
import io.lancerest.spark.mv.function.UdtfContext;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * A user-written batch table function: counts words over a whole partition and emits the most
 * frequent ones.
 *
 * <pre>
 * CREATE MATERIALIZED VIEW lance.ns.top_words
 *   USING UDTF 'io.lancerest.examples.custom.WordCountUdtf' PARTITION BY category
 *   OPTIONS (text_column = 'body', top = '3')
 *   AS SELECT category, body FROM lance.ns.docs
 * </pre>
 *
 * <p>Options: {@code text_column} (required), {@code top} (default 5), {@code min_length}
 * (default 4: shorter words are ignored). Output columns: the partition key as {@code key
 * string} (null for an unpartitioned view), {@code word string not null}, {@code n bigint not
 * null}. Memory: one counter per distinct word of the partition.
 */
public final class WordCountUdtf implements BatchUdtf {
  static final StructType OUTPUT = new StructType()
      .add("key", DataTypes.StringType, true)
      .add("word", DataTypes.StringType, false)
      .add("n", DataTypes.LongType, false);

  @Override
  public StructType outputSchema(StructType inputSchema, Map<String, String> options) {
    return OUTPUT;
  }

  /** Runs at CREATE and before each refresh, so a bad option fails once, by name. */
  @Override
  public void validate(StructType inputSchema, Map<String, String> options) {
    String column = options.get("text_column");
    List<String> columns = List.of(inputSchema.fieldNames());
    if (column == null || !columns.contains(column)) {
      throw new InvalidOptionException("text_column", column, "the input column whose words "
          + "are counted, one of " + columns);
    }
    OptionValues.wholeNumber(options, "top", 1, "a positive whole number");
    OptionValues.wholeNumber(options, "min_length", 1, "a positive whole number");
  }

  @Override
  public Iterator<Row> process(UdtfContext context, Iterator<Row> rows) {
    String column = context.options().get("text_column");
    int index = context.inputSchema().fieldIndex(column);
    int top = Integer.parseInt(context.option("top", "5"));
    int minLength = Integer.parseInt(context.option("min_length", "4"));
    // TreeMap: ties are broken alphabetically, so a re-run yields the same rows.
    Map<String, Long> counts = new TreeMap<>();
    while (rows.hasNext()) {
      Object text = rows.next().get(index);
      if (text == null) {
        continue;
      }
      for (String w : text.toString().toLowerCase(Locale.ROOT).split("[^\\p{L}\\p{N}]+")) {
        if (w.length() >= minLength) {
          counts.merge(w, 1L, Long::sum);
        }
      }
    }
    List<Map.Entry<String, Long>> sorted = new ArrayList<>(counts.entrySet());
    sorted.sort(Map.Entry.<String, Long>comparingByValue().reversed());
    Object key = context.partitionKey();
    List<Row> out = new ArrayList<>();
    for (Map.Entry<String, Long> e : sorted.subList(0, Math.min(top, sorted.size()))) {
      out.add(RowFactory.create(key == null ? null : key.toString(), e.getKey(), e.getValue()));
    }
    return out.iterator();
  }
}
