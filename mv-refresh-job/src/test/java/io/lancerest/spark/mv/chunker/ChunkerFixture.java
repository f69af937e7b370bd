package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.ErrorHandling;
import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.function.BatchChunker;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.lance.Dataset;
import org.lance.WriteParams;

/** Shared helpers: a session per test class ({@code TestSpark}), definitions, view contents. */
final class ChunkerFixture {
  static final Schema WORDS_OUT = new Schema(List.of(
      new Field("chunk", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null),
      new Field("char_offset", FieldType.notNullable(new ArrowType.Int(32, true)), null)));

  private ChunkerFixture() {}

  static SparkSession spark() {
    return io.lancerest.spark.mv.TestSpark.newSession();
  }

  static FunctionEnvelope function(Class<?> cls, boolean batch, Map<String, String> options) {
    return FunctionEnvelope.java(cls.getName(), cls.getSimpleName(), "1", WORDS_OUT,
        List.of("doc"), batch, options);
  }

  /** SELECT id, doc FROM source [WHERE filter], chunking doc; id is inherited. */
  static ChunkerDefinition definition(Class<?> cls, String filter, ErrorHandling eh) {
    return new ChunkerDefinition(List.of(new SourceQuery.OutputColumn("id", "id"),
        new SourceQuery.OutputColumn("doc", "doc")), filter,
        function(cls, BatchChunker.class.isAssignableFrom(cls), Map.of()), eh, false);
  }

  /** Local tables (no storage options), the view named by its location. */
  static ViewTables tables(String source, String view) {
    return new ViewTables(null, view, Map.of(), source, Map.of());
  }

  /** A new view table for the definition (what CREATE does): empty, stable row ids. */
  static String newView(SparkSession spark, Path dir, String name, String source,
      ChunkerDefinition def) {
    String uri = dir.resolve(name + ".lance").toString();
    Schema schema = ChunkerRefresh.viewSchema(ChunkerRefresh.read(spark, tables(source, uri),
        null), def);
    try (BufferAllocator a = new RootAllocator()) {
      Dataset.create(a, uri, schema, new WriteParams.Builder().withEnableStableRowIds(true)
          .build()).close();
    }
    return uri;
  }

  /** Refreshes the view at {@code view} from {@code source}. */
  static ChunkerRefreshResult refresh(SparkSession spark, String source, String view,
      ChunkerDefinition def, RefreshOptions options) {
    return refresh(spark, source, view, def, options, null);
  }

  /** Refreshes the view, reporting to {@code listener}. */
  static ChunkerRefreshResult refresh(SparkSession spark, String source, String view,
      ChunkerDefinition def, RefreshOptions options, RefreshListener listener) {
    return ChunkerRefresh.run(new RefreshContext(spark, view, options.jobId(), listener),
        tables(source, view), def, options);
  }

  /** Every row of a Lance table as "a|b|c", sorted. */
  static List<String> content(SparkSession spark, String uri) {
    List<String> out = new ArrayList<>();
    for (Row r : spark.read().format("lance").load(uri).collectAsList()) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < r.length(); i++) {
        sb.append(i == 0 ? "" : "|").append(r.get(i));
      }
      out.add(sb.toString());
    }
    out.sort(null);
    return out;
  }

  /** Content of a from-scratch refresh of the same definition into a new view. */
  static List<String> fromScratch(SparkSession spark, Path dir, String source,
      ChunkerDefinition def, RefreshOptions o) {
    String fresh = newView(spark, dir, "fresh" + System.nanoTime(), source, def);
    refresh(spark, source, fresh, def, o);
    return content(spark, fresh);
  }

  /**
   * A fresh source {@code docs.lance} in {@code dir} holding documents {@code [0, n)} in
   * fragments of {@code perFragment}, with the test chunkers' counters reset.
   */
  static String docsSource(Path dir, int n, java.util.function.LongFunction<String> text,
      int perFragment) {
    TestChunkers.reset();
    String source = dir.resolve("docs.lance").toString();
    SourceTables.create(source);
    SourceTables.append(source, SourceTables.docs(0, n, text), perFragment);
    return source;
  }

  static long version(String uri) {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a)) {
      return ds.version();
    }
  }

  static Dataset open(BufferAllocator a, String uri) {
    return Dataset.open(uri, a);
  }
}
