package io.lancerest.spark.mv.chunker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.function.ChunkerContext;
import io.lancerest.spark.mv.udtf.TopKUdtf;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/** The shipped chunkers, without Spark. */
class SplittersTest {
  private static List<String> run(Iterator<Row> it) {
    List<String> out = new ArrayList<>();
    it.forEachRemaining(r -> out.add(r.get(0) + "@" + r.get(1)));
    return out;
  }

  private static TextSplitter opened(Map<String, String> options) {
    TextSplitter t = new TextSplitter();
    t.open(new ChunkerContext("v", new StructType().add("doc", DataTypes.StringType),
        TextSplitter.OUTPUT, options));
    return t;
  }

  @Test
  void separatorDropsEmptyPiecesAndUnescapes() {
    TextSplitter t = opened(Map.of("separator", "\\n"));
    assertEquals(List.of("a b@0", "c@5"), run(t.split("a b\n\nc\n")));
    assertEquals(List.of(), run(t.split("")));
    assertEquals(List.of(), run(t.split(null)));
  }

  @Test
  void sizeWindowsOverlapAndEndAtTheText() {
    TextSplitter t = opened(Map.of("chunk_size", "4", "overlap", "2"));
    assertEquals(List.of("abcd@0", "cdef@2", "efg@4"), run(t.split("abcdefg")));
    assertEquals(List.of("abcd@0"), run(t.split("abcd")));
    assertEquals(List.of("ab@0"), run(t.split("ab")));
  }

  @Test
  void separatorAndSizeCutOnlyLongPieces() {
    TextSplitter t = opened(Map.of("separator", " ", "chunk_size", "3"));
    assertEquals(List.of("ab@0", "cde@3", "fgh@6", "i@9"), run(t.split("ab cdefghi")));
  }

  @Test
  void badOptionsSayWhatIsWrong() {
    assertEquals("TextSplitter needs option separator (a literal string to split at) or "
        + "chunk_size (a positive whole number of characters); neither is set",
        assertThrows(InvalidOptionException.class, () -> opened(Map.of())).getMessage());
    InvalidOptionException overlap = assertThrows(InvalidOptionException.class,
        () -> opened(Map.of("chunk_size", "4", "overlap", "4")));
    assertEquals("overlap must be a whole number from 0 to 3 (less than chunk_size), got '4'",
        overlap.getMessage());
    assertEquals("overlap", overlap.option());
    assertEquals("4", overlap.value());
    assertEquals("overlap must be 0 without chunk_size (it is the overlap of chunk_size "
        + "windows), got '2'", assertThrows(InvalidOptionException.class,
            () -> opened(Map.of("separator", " ", "overlap", "2"))).getMessage());
    assertEquals("chunk_size must be a positive whole number, got 'many'",
        assertThrows(InvalidOptionException.class, () -> opened(Map.of("chunk_size", "many")))
            .getMessage());
    assertEquals("chunk_size must be a positive whole number, got '-3'",
        assertThrows(InvalidOptionException.class, () -> opened(Map.of("separator", " ",
            "chunk_size", "-3"))).getMessage());
    assertEquals("TextSplitter has no option 'chunksize'; its options are chunk_size, "
        + "inherit_input_columns, overlap, separator", assertThrows(
            InvalidOptionException.class, () -> opened(Map.of("chunksize", "4"))).getMessage());
    assertEquals("TextSplitter splits its first input column, which must be a string; its input "
        + "columns are struct<n:int> (name the text column first in input_columns)",
        assertThrows(InvalidOptionException.class, () -> new TextSplitter().validate(
            Map.of("chunk_size", "4"), new StructType().add("n", DataTypes.IntegerType)))
            .getMessage());
  }

  @Test
  void arraySplitterAndTopKCheckTheirOptions() {
    StructType arrays = new StructType().add("v",
        DataTypes.createArrayType(DataTypes.IntegerType));
    assertEquals("size must be set to a positive whole number (elements per slice)",
        assertThrows(InvalidOptionException.class, () -> new ArraySplitter().validate(Map.of(),
            arrays)).getMessage());
    assertEquals("size must be a positive whole number (elements per slice), got '0'",
        assertThrows(InvalidOptionException.class, () -> new ArraySplitter().validate(
            Map.of("size", "0"), arrays)).getMessage());
    new ArraySplitter().validate(Map.of("size", "2"), arrays);

    StructType items = new StructType().add("cat", DataTypes.StringType)
        .add("price", DataTypes.DoubleType);
    TopKUdtf topK = new TopKUdtf();
    assertEquals("order_by must be set to the input column to rank by, one of [cat, price]",
        assertThrows(InvalidOptionException.class, () -> topK.validate(items, Map.of()))
            .getMessage());
    assertEquals("order_by must be the input column to rank by, one of [cat, price], got "
        + "'prize'", assertThrows(InvalidOptionException.class, () -> topK.validate(items,
            Map.of("order_by", "prize"))).getMessage());
    assertEquals("k must be a positive whole number, got '-1'", assertThrows(
        InvalidOptionException.class, () -> topK.validate(items, Map.of("order_by", "price",
            "k", "-1"))).getMessage());
    assertEquals("descending must be true or false, got 'yes'", assertThrows(
        InvalidOptionException.class, () -> topK.validate(items, Map.of("order_by", "price",
            "descending", "yes"))).getMessage());
    assertEquals("rank_column must be a column name that is not an input column [cat, price], "
        + "got 'price'", assertThrows(InvalidOptionException.class, () -> topK.validate(items,
            Map.of("order_by", "price", "rank_column", "price"))).getMessage());
    topK.validate(items, Map.of("order_by", "price", "k", "3", "descending", "FALSE"));
  }

  @Test
  void arraySplitterCutsFixedSizeSlices() {
    StructType in = new StructType().add("v", DataTypes.createArrayType(DataTypes.IntegerType));
    ArraySplitter s = new ArraySplitter();
    s.open(new ChunkerContext("v", in, s.outputSchema(Map.of(), in), Map.of("size", "2")));
    Row row = new GenericRowWithSchema(new Object[] {
        scala.collection.JavaConverters.asScalaBuffer(List.of(1, 2, 3, 4, 5)).toSeq()}, in);
    assertEquals(List.of("[1, 2]@0", "[3, 4]@2", "[5]@4"), run(s.chunk(row)));
    assertEquals(List.of(), run(s.chunk(RowFactory.create((Object) null))));
    assertEquals("struct<items:array<int>,start:int>",
        s.outputSchema(Map.of(), in).simpleString());
  }

  @Test
  void chunkerClassesAreCheckedForTheRightInterface() {
    var wrong = assertThrows(io.lancerest.spark.mv.error.InvalidViewDefinitionException.class,
        () -> ChunkerFunctions.check(TextSplitter.class.getName(), true));
    assertEquals("Chunker class 'io.lancerest.spark.mv.chunker.TextSplitter' does not implement "
        + "io.lancerest.spark.mv.function.BatchChunker (it implements Chunker: set batch = false)",
        wrong.getMessage());
    var missing = assertThrows(io.lancerest.spark.mv.error.InvalidViewDefinitionException.class,
        () -> ChunkerFunctions.check("com.example.Nope", false));
    assertEquals("Chunker class 'com.example.Nope' cannot be loaded (java.lang."
        + "ClassNotFoundException: com.example.Nope); put its jar on the classpath of the "
        + "driver and the executors (spark.jars)", missing.getMessage());
  }
}
