package io.lancerest.spark.mv.engine;

import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.lance.Dataset;

/** A table of an {@link EngineFixture} as lance-core sees it: fragments and versions. */
final class TableStats {
  private TableStats() {}

  static String location(EngineFixture f, String ns, String name) {
    return CatalogBinding.of(f.spark, EngineFixture.CATALOG).locate(List.of(ns, name), "table")
        .location();
  }

  static int fragments(EngineFixture f, String ns, String name) {
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = Dataset.open(location(f, ns, name), a)) {
      return ds.getFragments().size();
    }
  }

  static int versions(EngineFixture f, String ns, String name) {
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = Dataset.open(location(f, ns, name), a)) {
      return ds.listVersions().size();
    }
  }
}
