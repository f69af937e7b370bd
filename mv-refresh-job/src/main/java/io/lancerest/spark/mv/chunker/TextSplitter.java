package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.function.Chunker;
import io.lancerest.spark.mv.function.ChunkerContext;
import io.lancerest.spark.mv.function.OptionValues;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;

/**
 * Splits the text of the first input column into passages; {@code USING CHUNKER
 * 'io.lancerest.spark.mv.chunker.TextSplitter'}.
 *
 * <p>Options:
 * <ul>
 *   <li>{@code separator}: split at every occurrence of this literal string ({@code \n},
 *       {@code \t}, {@code \\} are unescaped); empty pieces are dropped;
 *   <li>{@code chunk_size}: at most this many characters per passage; with a separator, only
 *       pieces longer than this are cut further; without one, the whole text is cut into windows;
 *   <li>{@code overlap}: characters shared by consecutive windows of a cut (default 0, less than
 *       {@code chunk_size}).
 * </ul>
 * At least one of {@code separator} and {@code chunk_size} is required; {@link #validate} refuses
 * any other option, and values outside these ranges, at CREATE. A null text yields no
 * passages. Output columns: {@code chunk string not null}, {@code char_offset int not null} (the
 * passage's start in the text, in UTF-16 code units). Passages are produced lazily, so a huge
 * text is never held twice.
 */
public class TextSplitter implements Chunker {
  /** The options this class reads, plus the engine's inherit_input_columns. */
  private static final Set<String> OPTIONS = Set.of("separator", "chunk_size", "overlap",
      ChunkerDefinition.INHERIT_INPUT_COLUMNS);

  public static final StructType OUTPUT = new StructType()
      .add("chunk", DataTypes.StringType, false)
      .add("char_offset", DataTypes.IntegerType, false);

  private String separator;
  private int size;
  private int overlap;

  public TextSplitter() {}

  /** For direct use (tests, the benchmark): same meaning as the options. */
  public static TextSplitter of(String separator, int chunkSize, int overlap) {
    TextSplitter t = new TextSplitter();
    t.configure(separator, chunkSize, overlap);
    return t;
  }

  @Override
  public void validate(Map<String, String> options, StructType inputSchema) {
    OptionValues.onlyKnown(options, "TextSplitter", OPTIONS);
    String sep = options.get("separator");
    Integer chunkSize = OptionValues.wholeNumber(options, "chunk_size", 1,
        "a positive whole number");
    if ((sep == null || sep.isEmpty()) && chunkSize == null) {
      throw new InvalidOptionException("TextSplitter needs option separator (a literal string "
          + "to split at) or chunk_size (a positive whole number of characters); neither is set");
    }
    String overlapAllowed = chunkSize == null
        ? "0 without chunk_size (it is the overlap of chunk_size windows)"
        : "a whole number from 0 to " + (chunkSize - 1) + " (less than chunk_size)";
    Integer overlap = OptionValues.wholeNumber(options, "overlap", 0, overlapAllowed);
    if (overlap != null && overlap > 0 && (chunkSize == null || overlap >= chunkSize)) {
      throw new InvalidOptionException("overlap", options.get("overlap"), overlapAllowed);
    }
    if (inputSchema.fields().length == 0
        || !(inputSchema.fields()[0].dataType() instanceof StringType)) {
      throw new InvalidOptionException("TextSplitter splits its first input column, which must "
          + "be a string; its input columns are " + inputSchema.simpleString() + " (name the "
          + "text column first in input_columns)");
    }
  }

  @Override
  public void open(ChunkerContext context) {
    Map<String, String> o = context.options();
    validate(o, context.inputSchema());
    String sep = o.get("separator");
    Integer chunkSize = OptionValues.wholeNumber(o, "chunk_size", 1, "");
    Integer overlap = OptionValues.wholeNumber(o, "overlap", 0, "");
    configure(sep == null ? null : unescape(sep), chunkSize == null ? 0 : chunkSize,
        overlap == null ? 0 : overlap);
  }

  /** {@code chunkSize} 0 = no windows (separator only). */
  private void configure(String sep, int chunkSize, int overlapChars) {
    if ((sep == null || sep.isEmpty()) && chunkSize <= 0) {
      throw new IllegalArgumentException("TextSplitter needs a separator or a positive chunk "
          + "size");
    }
    if (chunkSize > 0 && (overlapChars < 0 || overlapChars >= chunkSize)) {
      throw new IllegalArgumentException("TextSplitter overlap must be >= 0 and less than the "
          + "chunk size (" + chunkSize + "), got " + overlapChars);
    }
    this.separator = sep == null || sep.isEmpty() ? null : sep;
    this.size = Math.max(chunkSize, 0);
    this.overlap = overlapChars;
  }

  static String unescape(String s) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 1 < s.length()) {
        char n = s.charAt(++i);
        sb.append(switch (n) {
          case 'n' -> '\n';
          case 't' -> '\t';
          case 'r' -> '\r';
          default -> n;
        });
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  @Override
  public Iterator<Row> chunk(Row input) {
    Object v = input.get(0);
    return split(v == null ? null : v.toString());
  }

  /** The passages of {@code text} as rows {@code (chunk, char_offset)}. */
  public Iterator<Row> split(String text) {
    if (text == null) {
      return java.util.Collections.emptyIterator();
    }
    return new Iterator<>() {
      private int pieceStart = 0; // start of the current separator piece
      private int pieceEnd = -1; // its end (exclusive); -1: not located yet
      private int windowStart = -1; // next window inside the piece; -1: piece not started
      private Row next;

      @Override
      public boolean hasNext() {
        if (next == null) {
          next = advance();
        }
        return next != null;
      }

      @Override
      public Row next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        Row r = next;
        next = null;
        return r;
      }

      private Row advance() {
        while (true) {
          if (pieceEnd < 0) {
            if (pieceStart > text.length()) {
              return null;
            }
            int end = separator == null ? text.length() : text.indexOf(separator, pieceStart);
            pieceEnd = end < 0 ? text.length() : end;
            windowStart = pieceStart;
          }
          if (windowStart < pieceEnd && (size == 0 || windowStart == pieceStart
              || windowStart + overlap < pieceEnd)) {
            int end = size == 0 ? pieceEnd : Math.min(pieceEnd, windowStart + size);
            Row r = RowFactory.create(text.substring(windowStart, end), windowStart);
            windowStart = end >= pieceEnd ? pieceEnd : end - overlap;
            return r;
          }
          pieceStart = pieceEnd + (separator == null ? 1 : separator.length());
          if (separator == null) {
            pieceStart = text.length() + 1;
          }
          pieceEnd = -1;
        }
      }
    };
  }

  @Override
  public StructType outputSchema(Map<String, String> options, StructType inputSchema) {
    return OUTPUT;
  }
}
