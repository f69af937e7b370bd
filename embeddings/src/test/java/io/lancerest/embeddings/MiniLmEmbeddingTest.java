package io.lancerest.embeddings;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.error.InvalidOptionException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The shipped embedding function on the real model (loaded once for the class). */
class MiniLmEmbeddingTest {
  private static final StructType TEXT = new StructType().add("text", DataTypes.StringType);
  private static final List<String> SENTENCES = List.of(
      "A man is playing a guitar.",
      "Someone plays the guitar on stage.",
      "The stock market fell sharply today.",
      "Shares dropped steeply on Wall Street this afternoon.",
      "How do I bake sourdough bread?",
      "Lance tables keep their vectors next to the data.",
      "",
      "Ünïcödé, emoji 🙂 and 漢字 are text too.",
      "short",
      "A fairly long sentence about refreshing materialized views incrementally on Spark.");

  private static MiniLmEmbedding shared;

  @BeforeAll
  static void open() throws Exception {
    shared = new MiniLmEmbedding();
    shared.open(Map.of());
  }

  @AfterAll
  static void close() throws Exception {
    shared.close();
  }

  @Test
  void declaresAndReturns384FloatVectorsOfUnitLength() throws Exception {
    MiniLmEmbedding f = new MiniLmEmbedding();
    assertEquals(384, f.vectorSize(Map.of()));
    assertEquals(DataTypes.createArrayType(DataTypes.FloatType, false),
        f.outputType(Map.of(), TEXT));
    assertTrue(f.shareable());
    List<float[]> out = shared.compute(rows(SENTENCES));
    assertEquals(SENTENCES.size(), out.size());
    for (float[] v : out) {
      assertEquals(384, v.length);
      assertEquals(1.0, norm(v), 1e-5);
    }
  }

  @Test
  void anotherInstanceGivesTheSameVectorsBitForBit() throws Exception {
    try (MiniLmEmbedding other = new MiniLmEmbedding()) {
      other.open(Map.of("threads", "2"));
      List<float[]> a = shared.compute(rows(SENTENCES));
      List<float[]> b = other.compute(rows(SENTENCES));
      for (int i = 0; i < a.size(); i++) {
        assertArrayEquals(a.get(i), b.get(i), "sentence " + i);
      }
    }
  }

  @Test
  void similarSentencesAreCloserThanUnrelatedOnes() throws Exception {
    List<float[]> v = shared.compute(rows(SENTENCES.subList(0, 5)));
    double guitars = cosine(v.get(0), v.get(1));
    double markets = cosine(v.get(2), v.get(3));
    double guitarMarket = cosine(v.get(0), v.get(2));
    double guitarBread = cosine(v.get(1), v.get(4));
    double marketBread = cosine(v.get(3), v.get(4));
    assertTrue(guitars > 0.5, "guitar sentences: " + guitars);
    assertTrue(markets > 0.5, "market sentences: " + markets);
    for (double unrelated : new double[] {guitarMarket, guitarBread, marketBread}) {
      assertTrue(unrelated < 0.2, "unrelated sentences: " + unrelated);
      assertTrue(guitars > unrelated + 0.3 && markets > unrelated + 0.3,
          guitars + ", " + markets + " vs " + unrelated);
    }
  }

  @Test
  void aBatchGivesEachTextTheVectorItGetsAlone() throws Exception {
    List<float[]> batch = shared.compute(rows(SENTENCES));
    for (int i = 0; i < SENTENCES.size(); i++) {
      float[] alone = shared.compute(rows(List.of(SENTENCES.get(i)))).get(0);
      assertArrayEquals(alone, batch.get(i), "sentence " + i + " in a batch and alone");
    }
    // Reversed, so every text has other neighbours and sits at another position.
    List<String> reversed = new ArrayList<>(SENTENCES);
    java.util.Collections.reverse(reversed);
    List<float[]> back = shared.compute(rows(reversed));
    for (int i = 0; i < SENTENCES.size(); i++) {
      assertArrayEquals(batch.get(i), back.get(SENTENCES.size() - 1 - i), "sentence " + i);
    }
  }

  @Test
  void nullTextGivesNullAndEmptyTextTheEmptySentencesVector() throws Exception {
    List<Row> in = List.of(RowFactory.create("A man is playing a guitar."),
        RowFactory.create((Object) null), RowFactory.create(""), RowFactory.create("   \t\n"));
    List<float[]> out = shared.compute(in);
    assertEquals(4, out.size());
    assertNotNull(out.get(0));
    assertNull(out.get(1));
    assertEquals(384, out.get(2).length);
    assertEquals(1.0, norm(out.get(2)), 1e-5);
    // Blank text tokenizes to nothing but the two markers, like the empty string.
    assertArrayEquals(out.get(2), out.get(3));
    assertFalse(Arrays.equals(out.get(0), out.get(2)));
    assertEquals(List.of(), shared.compute(List.of()));
  }

  @Test
  void normalizeFalseKeepsTheMeanVectorWithTheSameDirection() throws Exception {
    try (MiniLmEmbedding raw = new MiniLmEmbedding()) {
      raw.open(Map.of("normalize", "FALSE"));
      float[] r = raw.compute(rows(List.of(SENTENCES.get(0)))).get(0);
      float[] u = shared.compute(rows(List.of(SENTENCES.get(0)))).get(0);
      double n = norm(r);
      assertTrue(Math.abs(n - 1) > 0.05, "the raw mean is not unit length: " + n);
      for (int d = 0; d < 384; d++) {
        assertEquals(u[d], r[d] / n, 1e-6, "dimension " + d);
      }
    }
  }

  @Test
  void textBeyond256WordPiecesIsCut() throws Exception {
    String prefix = "lance ".repeat(300);
    List<float[]> out = shared.compute(rows(List.of(prefix + "guitar", prefix + "stock market",
        "lance ".repeat(100) + "guitar")));
    assertArrayEquals(out.get(0), out.get(1));
    assertFalse(Arrays.equals(out.get(0), out.get(2)));
  }

  @Test
  void severalThreadsOnOneInstanceGetTheVectorsOfOneThread() throws Exception {
    List<String> texts = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      texts.add(SENTENCES.get(i % SENTENCES.size()) + " number " + i);
    }
    List<float[]> expected = shared.compute(rows(texts));
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<List<float[]>>> futures = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int start = t * 10;
        futures.add(pool.submit(() -> {
          List<float[]> got = new ArrayList<>();
          // Each thread covers all texts, starting at another place, in batches of 7.
          for (int k = 0; k < texts.size(); k += 7) {
            List<String> batch = new ArrayList<>();
            for (int j = k; j < Math.min(k + 7, texts.size()); j++) {
              batch.add(texts.get((start + j) % texts.size()));
            }
            got.addAll(shared.compute(rows(batch)));
          }
          return got;
        }));
      }
      for (int t = 0; t < 4; t++) {
        List<float[]> got = futures.get(t).get(2, TimeUnit.MINUTES);
        for (int j = 0; j < texts.size(); j++) {
          assertArrayEquals(expected.get((t * 10 + j) % texts.size()), got.get(j),
              "thread " + t + ", text " + j);
        }
      }
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(1, TimeUnit.MINUTES), "the embedding threads ended");
    }
  }

  @Test
  void refusesComputeBeforeOpenAndAfterCloseAndASecondOpen() throws Exception {
    MiniLmEmbedding f = new MiniLmEmbedding();
    String notOpen = "MiniLmEmbedding is not open: call open(options) before compute, and do "
        + "not use it after close";
    assertEquals(notOpen, assertThrows(IllegalStateException.class,
        () -> f.compute(rows(List.of("x")))).getMessage());
    f.open(Map.of());
    assertEquals("MiniLmEmbedding is already open; close it before opening it again",
        assertThrows(IllegalStateException.class, () -> f.open(Map.of())).getMessage());
    assertEquals(384, f.compute(rows(List.of("x"))).get(0).length);
    f.close();
    f.close();
    assertEquals(notOpen, assertThrows(IllegalStateException.class,
        () -> f.compute(rows(List.of("x")))).getMessage());
  }

  @Test
  void refusesANonTextValueInARow() {
    assertEquals("MiniLmEmbedding embeds text, got a java.lang.Long; its input column must be "
        + "STRING", assertThrows(IllegalArgumentException.class,
            () -> shared.compute(List.of(RowFactory.create(7L)))).getMessage());
  }

  @Test
  void validateAcceptsTextAndTheDefaults() {
    MiniLmEmbedding f = new MiniLmEmbedding();
    f.validate(Map.of(), TEXT, null);
    f.validate(Map.of("threads", "4", "normalize", "false"), TEXT,
        DataTypes.createArrayType(DataTypes.FloatType, true));
    f.validate(Map.of("threads", " ", "normalize", ""), TEXT,
        DataTypes.createArrayType(DataTypes.FloatType, false));
  }

  @Test
  void validateRefusesBadOptionsWithTheirNameAndWhatIsAllowed() {
    String threads = "threads must be a whole number from 1 to 256 (ONNX Runtime threads per "
        + "model call; default 1), got '";
    assertRefused(threads + "0'", Map.of("threads", "0"));
    assertRefused(threads + "two'", Map.of("threads", "two"));
    assertRefused(threads + "1000'", Map.of("threads", "1000"));
    assertRefused("normalize must be true or false, got 'yes'", Map.of("normalize", "yes"));
    assertRefused("MiniLmEmbedding has no option 'batch_size'; its options are normalize, "
        + "threads", Map.of("batch_size", "32"));
    assertRefused("MiniLmEmbedding has no options 'Threads', 'model'; its options are "
        + "normalize, threads", Map.of("Threads", "2", "model", "x"));
    InvalidOptionException e = assertThrows(InvalidOptionException.class,
        () -> new MiniLmEmbedding().open(Map.of("threads", "-1")));
    assertEquals(threads + "-1'", e.getMessage());
    assertEquals("threads", e.option());
  }

  @Test
  void validateRefusesInputsThatAreNotOneTextColumnAndAWrongOutputType() {
    MiniLmEmbedding f = new MiniLmEmbedding();
    assertEquals("MiniLmEmbedding embeds text: input column 'n' is BIGINT; give a STRING column "
        + "(CAST it to STRING in a view, or pick another column)",
        assertThrows(InvalidOptionException.class, () -> f.validate(Map.of(),
            new StructType().add("n", DataTypes.LongType), null)).getMessage());
    assertEquals("MiniLmEmbedding takes one input column, the text to embed, got 2 (title, body);"
        + " name a single STRING column",
        assertThrows(InvalidOptionException.class, () -> f.validate(Map.of(),
            new StructType().add("title", DataTypes.StringType)
                .add("body", DataTypes.StringType), null)).getMessage());
    assertEquals("MiniLmEmbedding takes one input column, the text to embed, got 0; name a "
        + "single STRING column", assertThrows(InvalidOptionException.class,
            () -> f.validate(Map.of(), new StructType(), null)).getMessage());
    assertEquals("MiniLmEmbedding returns ARRAY<FLOAT> of 384 values; the column is declared "
        + "ARRAY<DOUBLE>; declare it ARRAY<FLOAT> or leave its type out",
        assertThrows(InvalidOptionException.class, () -> f.validate(Map.of(), TEXT,
            DataTypes.createArrayType(DataTypes.DoubleType))).getMessage());
  }

  private static void assertRefused(String message, Map<String, String> options) {
    InvalidOptionException e = assertThrows(InvalidOptionException.class,
        () -> new MiniLmEmbedding().validate(options, TEXT, null));
    assertEquals(message, e.getMessage());
  }

  private static List<Row> rows(List<String> texts) {
    List<Row> out = new ArrayList<>();
    for (String t : texts) {
      out.add(RowFactory.create(t));
    }
    return out;
  }

  private static double norm(float[] v) {
    double s = 0;
    for (float x : v) {
      s += (double) x * x;
    }
    return Math.sqrt(s);
  }

  private static double cosine(float[] a, float[] b) {
    double dot = 0;
    for (int i = 0; i < a.length; i++) {
      dot += (double) a[i] * b[i];
    }
    return dot / (norm(a) * norm(b));
  }
}
