package io.lancerest.spark.computed;

import io.lancerest.spark.mv.engine.CatalogBinding;
import io.lancerest.spark.mv.engine.EngineFixture;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.lance.Dataset;

/** Reads a test table's Lance dataset directly: its version, schema, fragments, config. */
final class ComputedTables {
  private ComputedTables() {}

  static <T> T at(EngineFixture f, String ns, String table, Function<Dataset, T> read) {
    CatalogBinding b = CatalogBinding.of(f.spark, EngineFixture.CATALOG);
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = b.locate(List.of(ns, table), "table").dataset().open(a, null)) {
      return read.apply(ds);
    }
  }

  static String uri(EngineFixture f, String ns, String table) {
    return CatalogBinding.of(f.spark, EngineFixture.CATALOG).locate(List.of(ns, table), "table")
        .location();
  }

  static long version(EngineFixture f, String ns, String table) {
    return at(f, ns, table, Dataset::version);
  }

  static Map<String, String> fieldMetadata(EngineFixture f, String ns, String table,
      String column) {
    return at(f, ns, table, ds -> ds.getSchema().findField(column).getMetadata());
  }
}
