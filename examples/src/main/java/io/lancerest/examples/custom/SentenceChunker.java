package io.lancerest.examples.custom;

import io.lancerest.spark.mv.function.Chunker;
import io.lancerest.spark.mv.function.ChunkerContext;
import io.lancerest.spark.mv.function.OptionValues;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * A user-written chunker: one output row per sentence of the first input column ({@code
 * input_columns}; the other selected columns are carried to every child row).
 *
 * <pre>
 * CREATE MATERIALIZED VIEW lance.ns.sentences
 *   USING CHUNKER 'io.lancerest.examples.custom.SentenceChunker'
 *   OPTIONS (input_columns = 'body', min_length = '3')
 *   AS SELECT id, body FROM lance.ns.docs
 * </pre>
 *
 * <p>Option {@code min_length} (default 1) drops sentences shorter than that many characters.
 * Output columns: {@code sentence string not null}, {@code position int not null} (0-based
 * sentence number in the text). The engine adds the parent's id and {@code __child_index}.
 */
public class SentenceChunker implements Chunker {
  static final StructType OUTPUT = new StructType()
      .add("sentence", DataTypes.StringType, false)
      .add("position", DataTypes.IntegerType, false);

  private int minLength;

  /** The engine creates one instance per thread with this constructor. */
  public SentenceChunker() {}

  /** Runs at CREATE and before each refresh, so a bad option fails once, by name. */
  @Override
  public void validate(Map<String, String> options, StructType inputSchema) {
    OptionValues.wholeNumber(options, "min_length", 1, "a positive whole number");
  }

  @Override
  public void open(ChunkerContext context) {
    minLength = context.intOption("min_length", 1);
  }

  @Override
  public Iterator<Row> chunk(Row input) {
    Object text = input.get(0);
    List<Row> out = new ArrayList<>();
    if (text == null) {
      return out.iterator();
    }
    int position = 0;
    // Split after '.', '!' or '?' followed by whitespace; deterministic, as the engine requires.
    for (String s : text.toString().split("(?<=[.!?])\\s+")) {
      String sentence = s.trim();
      if (sentence.length() >= minLength) {
        out.add(RowFactory.create(sentence, position++));
      }
    }
    return out.iterator();
  }

  /** Lets {@code CREATE MATERIALIZED VIEW} work without a declared output schema. */
  @Override
  public StructType outputSchema(Map<String, String> options, StructType inputSchema) {
    return OUTPUT;
  }
}
