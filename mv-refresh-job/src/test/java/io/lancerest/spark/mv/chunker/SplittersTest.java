package io.lancerest.spark.mv.chunker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
    IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
        () -> opened(Map.of()));
    assertEquals("TextSplitter needs option 'separator' or a positive 'chunk_size'",
        none.getMessage());
    IllegalArgumentException overlap = assertThrows(IllegalArgumentException.class,
        () -> opened(Map.of("chunk_size", "4", "overlap", "4")));
    assertEquals("TextSplitter option 'overlap' must be >= 0 and less than chunk_size (4), got "
        + "4", overlap.getMessage());
    IllegalArgumentException notInt = assertThrows(IllegalArgumentException.class,
        () -> opened(Map.of("chunk_size", "many")));
    assertEquals("Chunker option 'chunk_size' must be an integer, got 'many'",
        notInt.getMessage());
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
    var wrong = assertThrows(io.lancerest.spark.mv.InvalidViewDefinitionException.class,
        () -> ChunkerFunctions.check(TextSplitter.class.getName(), true));
    assertEquals("Chunker class 'io.lancerest.spark.mv.chunker.TextSplitter' does not implement "
        + "io.lancerest.spark.mv.chunker.BatchChunker (it implements Chunker: set batch = false)",
        wrong.getMessage());
    var missing = assertThrows(io.lancerest.spark.mv.InvalidViewDefinitionException.class,
        () -> ChunkerFunctions.check("com.example.Nope", false));
    assertEquals("Chunker class 'com.example.Nope' cannot be loaded (java.lang."
        + "ClassNotFoundException: com.example.Nope); put its jar on the classpath of the "
        + "driver and the executors (spark.jars)", missing.getMessage());
  }
}
