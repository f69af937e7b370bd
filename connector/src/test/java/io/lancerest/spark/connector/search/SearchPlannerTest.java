package io.lancerest.spark.connector.search;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.testing.LanceStates;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float4Vector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.index.DistanceType;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.vector.VectorIndexParams;

/**
 * The search core with lance-core alone (no Spark): what a plan says it uses, and that its rows
 * are a brute-force scan's (an ivf_flat index probed in every partition is exact), also with
 * deleted rows and rows the index does not cover yet.
 */
class SearchPlannerTest {
  private static final float[] KEY = {0.9f, 0.2f, -0.4f, 0.7f};

  @TempDir
  Path dir;

  /** {@link LanceStates}' vector of row {@code id}: {@code sin(id * (j + 1) / 1000)}. */
  private static float[] vectorOf(long id) {
    float[] v = new float[4];
    for (int j = 0; j < 4; j++) {
      v[j] = (float) Math.sin(id * (j + 1) / 1000.0);
    }
    return v;
  }

  /** The k nearest ids among {@code ids} by squared L2 (lance's l2). */
  private static List<Long> bruteForce(List<Long> ids, int k) {
    List<Long> sorted = new ArrayList<>(ids);
    sorted.sort(Comparator.comparingDouble(id -> {
      float[] v = vectorOf(id);
      double d = 0;
      for (int j = 0; j < 4; j++) {
        d += (v[j] - KEY[j]) * (double) (v[j] - KEY[j]);
      }
      return d;
    }));
    return sorted.subList(0, k);
  }

  private static List<Long> ids(long from, long to, long deletedModulus, long deleted) {
    List<Long> out = new ArrayList<>();
    for (long id = from; id < to; id++) {
      if (id % deletedModulus != deleted) {
        out.add(id);
      }
    }
    return out;
  }

  /** The plan's rows as ids, checking {@code _distance} ascends. */
  private static List<Long> run(Dataset ds, SearchPlan plan) throws Exception {
    List<Long> out = new ArrayList<>();
    float[] last = {-1};
    Searches.run(ds, plan, List.of("id"), batch -> {
      BigIntVector id = (BigIntVector) batch.getVector("id");
      Float4Vector d = (Float4Vector) batch.getVector(SearchPlan.DISTANCE);
      for (int i = 0; i < batch.getRowCount(); i++) {
        assertEquals(true, d.get(i) >= last[0], "_distance ascending");
        last[0] = d.get(i);
        out.add(id.get(i));
      }
    });
    return out;
  }

  @Test
  void anIvfFlatSearchOfEveryPartitionEqualsBruteForceAndThePlanSaysSo() throws Exception {
    String uri = dir.resolve("t").toString();
    LanceStates.writeWide(uri, 0, 2000, true, true, true, false);
    LanceStates.delete(uri, "id % 100 = 7"); // fragments with deletions: fetched by row id
    List<Long> live = ids(0, 2000, 100, 7);
    VectorSearchRequest r = new VectorSearchRequest("vec", KEY, 10, 4, null, null);
    try (BufferAllocator a = new RootAllocator()) {
      try (Dataset ds = Dataset.open(uri, a)) {
        SearchPlan flat = SearchPlanner.of(ds, "t").vector(r);
        assertEquals("vector search of column vec for k=10 (l2): no index on column vec: exact "
            + "scan of 1980 rows", flat.explain());
        assertEquals(bruteForce(live, 10), run(ds, flat));
        ds.createIndex(List.of("vec"), IndexType.IVF_FLAT, Optional.of("vidx"),
            IndexParams.builder().setVectorIndexParams(VectorIndexParams.ivfFlat(4,
                DistanceType.L2)).build(), true);
      }
      try (Dataset ds = Dataset.open(uri, a)) {
        SearchPlan indexed = SearchPlanner.of(ds, "t").vector(r);
        assertEquals("vector search of column vec for k=10 (l2): index vidx (IVF_FLAT, 4 "
            + "partitions, nprobes 4)", indexed.explain());
        assertEquals(bruteForce(live, 10), run(ds, indexed));
      }
      // rows the index does not cover yet are searched too
      LanceStates.writeWide(uri, 2000, 2100, true, false, true, false);
      live.addAll(ids(2000, 2100, 1, -1));
      try (Dataset ds = Dataset.open(uri, a)) {
        SearchPlan partly = SearchPlanner.of(ds, "t").vector(
            new VectorSearchRequest(null, KEY, 25, 4, null, "l2"));
        assertEquals("vector search of column vec for k=25 (l2): index vidx (IVF_FLAT, 4 "
            + "partitions, nprobes 4), 100 rows not in the index searched exactly",
            partly.explain());
        assertEquals(bruteForce(live, 25), run(ds, partly));
        assertEquals("vector_search on t: index vidx on column vec measures l2 distances, but "
            + "the search asks for cosine. Search without distance_type (or with 'l2'), or "
            + "build the index with metric = 'cosine'.",
            assertThrows(SearchException.class, () -> SearchPlanner.of(ds, "t").vector(
                new VectorSearchRequest("vec", KEY, 3, null, null, "cosine"))).getMessage());
      }
    }
  }

  @Test
  void aCosineSearchWithoutAnIndexRanksByCosineDistance() throws Exception {
    String uri = dir.resolve("c").toString();
    LanceStates.writeWide(uri, 0, 500, true, true, true, false);
    List<Long> expected = new ArrayList<>(ids(1, 500, 1, -1)); // row 0 is the zero vector
    expected.sort(Comparator.comparingDouble(id -> {
      float[] v = vectorOf(id);
      double dot = 0;
      double nv = 0;
      double nk = 0;
      for (int j = 0; j < 4; j++) {
        dot += v[j] * (double) KEY[j];
        nv += v[j] * (double) v[j];
        nk += KEY[j] * (double) KEY[j];
      }
      return 1 - dot / Math.sqrt(nv * nk);
    }));
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a)) {
      SearchPlan plan = SearchPlanner.of(ds, "c").vector(
          new VectorSearchRequest("vec", KEY, 8, null, null, "COSINE"));
      assertEquals("vector search of column vec for k=8 (cosine): no index on column vec: exact "
          + "scan of 500 rows", plan.explain());
      assertEquals(expected.subList(0, 8), run(ds, plan));
    }
  }

  @Test
  void aTableACompactionRewroteIsRefusedBeforeAQuadraticSearch() {
    String uri = dir.resolve("r").toString();
    LanceStates.writeWide(uri, 0, 2000, true, true, true, false);
    LanceStates.delete(uri, "id % 1000 = 7");
    LanceStates.compactDroppingDeletions(uri);
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a)) {
      SearchException e = assertThrows(SearchException.class, () -> SearchPlanner.of(ds, "t")
          .vector(new VectorSearchRequest("vec", KEY, 3, null, null, null)));
      assertEquals("Search on t refused: fragments [1] were rewritten by a compaction that "
          + "dropped deleted rows, and lance-core 4.0.0 needs time quadratic in a fragment's "
          + "rows to search such a fragment (hours for a million rows; "
          + "docs/lance-core-scan-defect.md). To give it plain row ids: a table, recreate it "
          + "(CREATE TABLE ... AS SELECT); a materialized view, REFRESH MATERIALIZED VIEW ... "
          + "WITH (force = true), and compact it with OPTIMIZE MATERIALIZED VIEW, not "
          + "lance-spark's OPTIMIZE.", e.getMessage());
    }
  }

  @Test
  void aKWhoseRowsWouldBeFetchedSlowlyFromFragmentsWithDeletionsIsRefused() {
    String uri = dir.resolve("k").toString();
    LanceStates.writeWide(uri, 0, 40_000, true, true, true, false);
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a)) {
      RowFetchBound none = RowFetchBound.of(ds, "ns.k");
      assertEquals(Long.MAX_VALUE, none.maxK());
      none.check("vector_search", SearchPlanner.of(ds, "ns.k").vector(
          new VectorSearchRequest("vec", KEY, Integer.MAX_VALUE, null, null, null)), true);
    }
    LanceStates.delete(uri, "id % 1000 = 7");
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a)) {
      RowFetchBound bound = RowFetchBound.of(ds, "ns.k");
      assertEquals(25_000L, bound.maxK()); // 10^9 / 40,000 rows
      SearchPlanner p = SearchPlanner.of(ds, "ns.k");
      bound.check("vector_search", p.vector(
          new VectorSearchRequest("vec", KEY, 25_000, null, null, null)), true);
      SearchPlan over = p.vector(new VectorSearchRequest("vec", KEY, 25_001, null, null, null));
      bound.check("vector_search", over, false); // only _distance: nothing is fetched
      assertEquals("vector_search on ns.k: k = 25001 is too large for this table: fragments "
          + "[0] have deleted rows, and lance-core 4.0.0 fetches each returned row of such a "
          + "fragment in time proportional to its rows (the largest has 40000; k times that may "
          + "be at most 1000000000, about 15 s; docs/search.md). Ask for k of at most 25000, "
          + "or select only _distance, or rewrite the table without deleted rows (a "
          + "materialized view: REFRESH MATERIALIZED VIEW ... WITH (force = true); a table: "
          + "CREATE TABLE ... AS SELECT).",
          assertThrows(SearchException.class, () -> bound.check("vector_search", over, true))
              .getMessage());
    }
    // without an index the search is exact and a refine factor re-ranks nothing
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a)) {
      SearchPlan exact = SearchPlanner.of(ds, "ns.k").vector(
          new VectorSearchRequest("vec", KEY, 25_000, null, 10, null));
      assertNull(exact.vector().refineFactor());
      assertTrue(exact.explain().endsWith("(refine_factor not needed: distances are exact)"),
          exact.explain());
      RowFetchBound.of(ds, "ns.k").check("vector_search", exact, false);
      ds.createIndex(List.of("vec"), IndexType.IVF_FLAT, Optional.of("vidx"),
          IndexParams.builder().setVectorIndexParams(VectorIndexParams.ivfFlat(4,
              DistanceType.L2)).build(), true);
    }
    // through an index, the k x refine_factor candidates' vectors are fetched to re-rank them,
    // even for _distance only, and the k rows kept are fetched again for table columns
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a)) {
      RowFetchBound bound = RowFetchBound.of(ds, "ns.k");
      SearchPlanner p = SearchPlanner.of(ds, "ns.k");
      bound.check("vector_search", p.vector(
          new VectorSearchRequest("vec", KEY, 2_500, null, 10, null)), false);
      bound.check("vector_search", p.vector(
          new VectorSearchRequest("vec", KEY, 2_000, null, 10, null)), true);
      SearchPlan refined = p.vector(new VectorSearchRequest("vec", KEY, 2_501, null, 10, null));
      assertEquals("vector_search on ns.k: k = 2501 with refine_factor 10 (25010 rows fetched: "
          + "25010 candidates re-ranked) is too large for this table: fragments [0] have "
          + "deleted rows, and lance-core 4.0.0 fetches each row it returns or re-ranks of such "
          + "a fragment in time proportional to its rows (the largest has 40000; the rows "
          + "fetched times that may be at most 1000000000, about 15 s; docs/search.md). Ask for "
          + "fewer rows: k times refine_factor of at most 25000, or no refine_factor and select "
          + "only _distance, or rewrite the table without deleted rows (a materialized view: "
          + "REFRESH MATERIALIZED VIEW ... WITH (force = true); a table: CREATE TABLE ... AS "
          + "SELECT).",
          assertThrows(SearchException.class, () -> bound.check("vector_search", refined,
              false)).getMessage());
      SearchPlan withColumns = p.vector(
          new VectorSearchRequest("vec", KEY, 2_300, null, 10, null));
      assertTrue(assertThrows(SearchException.class, () -> bound.check("vector_search",
          withColumns, true)).getMessage().contains("(25300 rows fetched: 23000 candidates "
          + "re-ranked and 2300 returned) is too large for this table"));
    }
    // a table of fewer rows than k returns them all: the work is bounded by its rows
    String small = dir.resolve("s").toString();
    LanceStates.writeWide(small, 0, 2000, true, true, true, false);
    LanceStates.delete(small, "id % 1000 = 7");
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(small, a)) {
      RowFetchBound.of(ds, "ns.s").check("vector_search", SearchPlanner.of(ds, "ns.s").vector(
          new VectorSearchRequest("vec", KEY, Integer.MAX_VALUE, null, null, null)), true);
    }
  }

  @Test
  void badRequestsNameTheColumnAndWhatToDo() {
    String uri = dir.resolve("b").toString();
    LanceStates.writeWide(uri, 0, 100, true, true, true, false);
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a)) {
      SearchPlanner p = SearchPlanner.of(ds, "ns.b");
      assertEquals("vector_search on ns.b: column 'name' is STRING, not a vector (a fixed-size "
          + "list of floats). Search a vector column.", assertThrows(SearchException.class,
          () -> p.vector(new VectorSearchRequest("name", KEY, 3, null, null, null)))
          .getMessage());
      assertEquals("vector_search on ns.b: unknown distance_type 'manhattan'; use one of l2, "
          + "cosine, dot.", assertThrows(SearchException.class,
          () -> p.vector(new VectorSearchRequest("vec", KEY, 3, null, null, "manhattan")))
          .getMessage());
      assertEquals("vector_search on ns.b: distance_type 'hamming' is for binary vectors, and "
          + "column 'vec' holds floats; use one of l2, cosine, dot.",
          assertThrows(SearchException.class,
              () -> p.vector(new VectorSearchRequest("vec", KEY, 3, null, null, "Hamming")))
              .getMessage());
      assertEquals("vector_search on ns.b: nprobes must be at least 1, got 0.",
          assertThrows(SearchException.class,
              () -> p.vector(new VectorSearchRequest("vec", KEY, 3, 0, null, null)))
              .getMessage());
      assertEquals("search on ns.b: the query is empty; pass the words to look for.",
          assertThrows(SearchException.class,
              () -> p.text(new TextSearchRequest(" ", List.of("name"), 3))).getMessage());
    }
  }
}
