package io.lancerest.spark.mv.commit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.connector.LanceLocation;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.Transaction;
import org.lance.WriteParams;
import org.lance.index.Index;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.scalar.ScalarIndexParams;
import org.lance.ipc.FullTextQuery;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.Query;
import org.lance.ipc.ScanOptions;
import org.lance.operation.Append;

/**
 * Indexes of a view table carried over its commits (lance-core 4.0.0 Overwrite + CreateIndex +
 * optimize), on real local tables of {@code id BIGINT, vec 8-d vector, text STRING} with stable
 * row ids: after every commit each index is listed, covers every live row, and a search through
 * it equals a brute-force answer over the table's rows.
 */
class IndexCarryTest {
  private static final int DIM = 8;
  private static final Schema SCHEMA = new Schema(List.of(
      new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
      new Field("vec", FieldType.nullable(new ArrowType.FixedSizeList(DIM)), List.of(
          Field.nullable("item", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)))),
      new Field("text", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));
  private static final String FTS_PARAMS = "{\"base_tokenizer\":\"simple\",\"language\":"
      + "\"English\",\"max_token_length\":40,\"lower_case\":true,\"stem\":false,"
      + "\"remove_stop_words\":false,\"ascii_folding\":false,\"with_position\":false}";
  private static BufferAllocator allocator;
  @TempDir Path dir;
  private String uri;

  @BeforeAll
  static void allocator() {
    allocator = new RootAllocator();
  }

  @AfterAll
  static void close() {
    allocator.close();
  }

  /** Ids 0..399 in 4 fragments of 100 (ids 0..3), at version 2. */
  @BeforeEach
  void table() {
    uri = dir.resolve("view.lance").toString();
    WriteParams p = new WriteParams.Builder().withEnableStableRowIds(true).build();
    Dataset.create(allocator, uri, SCHEMA, p).close();
    try (Dataset ds = Dataset.open(uri, allocator);
        Transaction t = new Transaction.Builder().readVersion(1).operation(Append.builder()
            .fragments(rows(0, 400, 100)).build()).build();
        Dataset done = new CommitBuilder(ds).execute(t)) {
      assertEquals(2, done.version());
    }
  }

  /** Row {@code id}'s vector: distinct, spread over the space. */
  private static float[] vector(long id) {
    float[] v = new float[DIM];
    for (int d = 0; d < DIM; d++) {
      v[d] = (float) Math.sin(id * (d + 1) * 0.37 + d);
    }
    return v;
  }

  private static String text(long id) {
    return "word" + (id % 13) + " doc" + id;
  }

  private List<FragmentMetadata> rows(long from, long to, int perFragment) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
      BigIntVector id = (BigIntVector) root.getVector("id");
      FixedSizeListVector vec = (FixedSizeListVector) root.getVector("vec");
      VarCharVector text = (VarCharVector) root.getVector("text");
      Float4Vector items = (Float4Vector) vec.getDataVector();
      root.allocateNew();
      int n = (int) (to - from);
      for (int i = 0; i < n; i++) {
        long x = from + i;
        id.setSafe(i, x);
        vec.setNotNull(i);
        float[] v = vector(x);
        for (int d = 0; d < DIM; d++) {
          items.setSafe(i * DIM + d, v[d]);
        }
        text.setSafe(i, text(x).getBytes(StandardCharsets.UTF_8));
      }
      root.setRowCount(n);
      return FragmentShipping.write(LanceLocation.of(uri, Map.of()), allocator, root,
          perFragment);
    }
  }

  private void index(String method, String name) {
    try (Dataset ds = Dataset.open(uri, allocator)) {
      switch (method) {
        case "btree", "bitmap" -> ds.createIndex(List.of("id"), method.equals("btree")
            ? IndexType.BTREE : IndexType.BITMAP, Optional.of(name), IndexParams.builder()
            .setScalarIndexParams(ScalarIndexParams.create(method)).build(), true);
        case "fts" -> ds.createIndex(List.of("text"), IndexType.INVERTED, Optional.of(name),
            IndexParams.builder().setScalarIndexParams(ScalarIndexParams.create("inverted",
                FTS_PARAMS)).build(), true);
        default -> {
          IndexRecipe r = recipe(method);
          ds.createIndex(List.of("vec"), r.type(), Optional.of(name), r.params(), true);
        }
      }
    }
  }

  private static IndexRecipe recipe(String method) {
    return new IndexRecipe(method, "vec", method.contains("pq")
        ? Map.of("num_partitions", "2", "num_sub_vectors", "4") : Map.of("num_partitions", "2"));
  }

  private void recordRecipe(String method, String name) {
    try (Dataset ds = Dataset.open(uri, allocator)) {
      recipe(method).record(ds, name);
    }
  }

  /** The live rows: id → vector. */
  private TreeMap<Long, float[]> live() {
    TreeMap<Long, float[]> out = new TreeMap<>();
    scan(new ScanOptions.Builder().columns(List.of("id")).build()).forEach(id ->
        out.put(id, vector(id)));
    return out;
  }

  private List<Long> scan(ScanOptions o) {
    List<Long> out = new ArrayList<>();
    try (Dataset ds = Dataset.open(uri, allocator); LanceScanner s = ds.newScan(o);
        ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        BigIntVector v = (BigIntVector) r.getVectorSchemaRoot().getVector("id");
        for (int i = 0; i < v.getValueCount(); i++) {
          out.add(v.get(i));
        }
      }
    } catch (Exception e) { // the scanner's close declares Exception
      throw new IllegalStateException(e);
    }
    return out;
  }

  /** The k nearest ids to {@code key} through the index, every partition probed. */
  private List<Long> nearest(float[] key, int k) {
    return nearest(key, k, 1);
  }

  /**
   * {@link #nearest(float[], int)}, re-ranking {@code refine} times k candidates by their exact
   * distance (quantizing methods: PQ, SQ, RQ order the candidates approximately).
   */
  private List<Long> nearest(float[] key, int k, int refine) {
    Query.Builder q = new Query.Builder().setColumn("vec").setKey(key).setK(k).setNprobes(64)
        .setEf(1000);
    if (refine > 1) {
      q.setRefineFactor(refine);
    }
    return scan(new ScanOptions.Builder().columns(List.of("id")).nearest(q.build()).build());
  }

  private static List<Long> bruteNearest(TreeMap<Long, float[]> rows, float[] key, int k) {
    return rows.entrySet().stream().sorted(Comparator.comparingDouble(e -> l2(e.getValue(),
        key))).limit(k).map(Map.Entry::getKey).toList();
  }

  private static double l2(float[] a, float[] b) {
    double s = 0;
    for (int i = 0; i < a.length; i++) {
      s += (a[i] - b[i]) * (a[i] - b[i]);
    }
    return s;
  }

  private List<Long> fts(String word) {
    return scan(new ScanOptions.Builder().columns(List.of("id"))
        .fullTextQuery(FullTextQuery.match(word, "text")).build()).stream().sorted().toList();
  }

  private List<Index> segments(String name) {
    try (Dataset ds = Dataset.open(uri, allocator)) {
      return ds.getIndexes().stream().filter(i -> i.name().equals(name)).toList();
    }
  }

  private long version() {
    try (Dataset ds = Dataset.open(uri, allocator)) {
      return ds.version();
    }
  }

  /** One refresh-like commit: deletes ids {@code id % 9 == round}, adds ids [from, from+n). */
  private ViewCommitResult refresh(int round, long from, int n) {
    return ViewCommit.builder(uri, version()).deleteWhere("id % 9 = " + round)
        .addFragments(rows(from, from + n, 0)).build().commit();
  }

  private IndexOutcome outcome(ViewCommitResult r, String name) {
    return r.indexes().stream().filter(o -> o.name().equals(name)).findFirst().orElseThrow(
        () -> new AssertionError("no outcome for index " + name + ": " + r.indexes()));
  }

  /** Searches through index {@code name} ({@code method}) equal brute force over the rows. */
  private void checkSearch(String method, TreeMap<Long, float[]> rows, long newId) {
    switch (method) {
      case "btree", "bitmap" -> {
        assertEquals(List.of(newId), scan(new ScanOptions.Builder().columns(List.of("id"))
            .filter("id = " + newId).build()));
        for (long gone = 0; gone < 9; gone++) {
          assertEquals(rows.containsKey(gone) ? List.of(gone) : List.of(), scan(
              new ScanOptions.Builder().columns(List.of("id")).filter("id = " + gone)
                  .build()), "id " + gone);
        }
      }
      case "fts" -> {
        for (String w : List.of("word0", "word5", "doc" + newId)) {
          assertEquals(rows.keySet().stream().filter(id -> List.of(text(id).split(" "))
              .contains(w)).toList(), fts(w), "full-text search of " + w);
        }
      }
      default -> {
        int k = 10;
        int refine = method.equals("ivf_flat") ? 1 : 100;
        for (long probe : List.of(newId, 3L, 200L)) {
          List<Long> got = nearest(vector(probe), k, refine);
          assertTrue(rows.keySet().containsAll(got), "only live rows: " + got);
          // as sets: rows at equal distances may come in either order
          assertEquals(new TreeSet<>(bruteNearest(rows, vector(probe), k)), new TreeSet<>(got),
              "nearest to " + probe);
        }
      }
    }
  }

  /**
   * Every index method lance-core builds survives commits that delete rows across fragments,
   * drop a fragment whole and add new ones: all of lance-core 4.0.0's vector methods keep up
   * through delta segments, scalar and full-text ones through merges.
   */
  @ParameterizedTest
  @ValueSource(strings = {"ivf_flat", "ivf_pq", "ivf_sq", "ivf_rq", "ivf_hnsw_pq", "ivf_hnsw_sq",
      "btree", "bitmap", "fts"})
  void everyIndexMethodSurvivesCommitsAndAnswersAsABruteForceScan(String method) {
    index(method, "ix");
    boolean vector = method.startsWith("ivf");
    long indexed = 400;
    for (int round = 0; round < 3; round++) {
      long from = 1000 + round * 100;
      ViewCommitResult r = refresh(round, from, 60);
      IndexOutcome o = outcome(r, "ix");
      assertEquals(IndexOutcome.Action.UPDATED, o.action(), o.toString());
      assertEquals(60, o.rowsAdded(), o.toString());
      assertEquals(0, o.rowsUnindexed(), o.toString());
      TreeMap<Long, float[]> rows = live();
      assertEquals(rows.size(), o.rowsIndexed(), o.toString());
      assertTrue(o.rowsIndexed() > indexed - 60, o.toString());
      indexed = o.rowsIndexed();
      assertEquals(vector ? round + 2 : 1, segments("ix").size(), "segments after round "
          + round);
      assertEquals(r.latestVersion(), version());
      checkSearch(method, rows, from + 59);
    }
  }

  /**
   * A fragment id is never given again while a carried index names it: here fragment 3 (the
   * highest) loses every row in one commit, and the next commit's new fragment must not become
   * "fragment 3", which the index claims to cover.
   */
  @Test
  void newFragmentIdsStartAboveEveryIdACarriedIndexNames() {
    index("btree", "ix");
    index("ivf_flat", "vix");
    ViewCommit.builder(uri, version()).deleteWhere("id >= 300").build().commit();
    ViewCommitResult r = ViewCommit.builder(uri, version())
        .addFragments(rows(5000, 5010, 0)).build().commit();
    assertEquals(List.of(5005L), scan(new ScanOptions.Builder().columns(List.of("id"))
        .filter("id = 5005").build()), "the new row is found through the btree index");
    assertEquals(5005L, nearest(vector(5005), 1).get(0), "and through the vector index");
    try (Dataset ds = Dataset.open(uri, allocator)) {
      assertEquals(List.of(0, 1, 2, 4), ds.getFragments().stream().map(f -> f.getId())
          .toList());
    }
    assertEquals(10, outcome(r, "ix").rowsAdded());
  }

  /**
   * Killed between the Overwrite and the registration: the view's next commit registers the
   * indexes the Overwrite recorded (and brings them up to date).
   */
  @Test
  void theNextCommitRegistersWhatAnInterruptedCommitCarried() {
    index("btree", "ix");
    index("fts", "fts");
    ViewCommit first = ViewCommit.builder(uri, version()).deleteWhere("id % 9 = 0")
        .addFragments(rows(1000, 1050, 0)).build();
    try (Dataset ds = Dataset.open(uri, allocator)) {
      first.overwrite(allocator, ds, () -> { }); // the driver dies here
    }
    try (Dataset ds = Dataset.open(uri, allocator)) {
      assertEquals(List.of(), ds.listIndexes(), "the Overwrite alone lists no index");
      assertTrue(ds.getSchema().getCustomMetadata().get(IndexCarry.KEY).contains("\"ix\""));
    }
    ViewCommitResult r = refresh(1, 2000, 20);
    assertEquals(new TreeSet<>(List.of("ix", "fts")), new TreeSet<>(r.indexes().stream()
        .map(IndexOutcome::name).toList()));
    TreeMap<Long, float[]> rows = live();
    for (String name : List.of("ix", "fts")) {
      IndexOutcome o = outcome(r, name);
      assertEquals(IndexOutcome.Action.UPDATED, o.action(), o.toString());
      assertEquals(rows.size(), o.rowsIndexed(), o.toString());
    }
    checkSearch("btree", rows, 2019);
    checkSearch("fts", rows, 2019);
    // registered once: a later commit owes nothing and finds each index once
    ViewCommitResult again = refresh(2, 3000, 5);
    assertEquals(2, again.indexes().size());
    assertEquals(1, segments("ix").size());
  }

  /**
   * Killed between, and a cleanup removed the index files meanwhile: a vector index with a
   * recipe is built again, one without is reported lost with what to do.
   */
  @Test
  void indexFilesRemovedAfterAnInterruptedCommitAreRebuiltFromTheRecipeOrReportedLost()
      throws IOException {
    index("ivf_flat", "vix");
    recordRecipe("ivf_flat", "vix");
    index("btree", "ix");
    List<Index> before;
    try (Dataset ds = Dataset.open(uri, allocator)) {
      before = ds.getIndexes();
    }
    ViewCommit first = ViewCommit.builder(uri, version()).deleteWhere("id % 9 = 0").build();
    try (Dataset ds = Dataset.open(uri, allocator)) {
      first.overwrite(allocator, ds, () -> { });
    }
    for (Index i : before) { // what a cleanup of the old versions removes
      deleteTree(Path.of(uri, "_indices", i.uuid().toString()));
    }
    ViewCommitResult r = refresh(1, 2000, 20);
    IndexOutcome v = outcome(r, "vix");
    assertEquals(IndexOutcome.Action.REBUILT, v.action(), v.toString());
    assertTrue(v.detail().contains("its files are gone"), v.detail());
    IndexOutcome b = outcome(r, "ix");
    assertEquals(IndexOutcome.Action.LOST, b.action(), b.toString());
    assertTrue(b.toString().endsWith("no recipe to build it again: create the index again)"),
        b.toString());
    try (Dataset ds = Dataset.open(uri, allocator)) {
      assertEquals(List.of("vix"), ds.listIndexes());
    }
    checkSearch("ivf_flat", live(), 2019);
  }

  private static void deleteTree(Path p) throws IOException {
    try (var walk = Files.walk(p)) {
      for (Path x : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(x);
      }
    }
  }

  /**
   * A full rebuild (every row replaced, as a UDTF view's every refresh) keeps every index: a
   * vector index whose model covered about as many rows gets a delta segment on its centroids
   * (no retrain), scalar and full-text indexes take the new rows in.
   */
  @Test
  void aFullRebuildKeepsEveryIndex() {
    index("ivf_flat", "vix");
    recordRecipe("ivf_flat", "vix");
    index("ivf_flat", "other"); // made by another tool: no recipe
    index("btree", "ix");
    index("fts", "fts");
    ViewCommitResult r = ViewCommit.builder(uri, version()).replaceAllRows()
        .addFragments(rows(7000, 7300, 100)).build().commit();
    for (String name : List.of("vix", "other", "ix", "fts")) {
      IndexOutcome o = outcome(r, name);
      assertEquals(IndexOutcome.Action.UPDATED, o.action(), o.toString());
      assertEquals(300, o.rowsIndexed(), o.toString());
      assertEquals(0, o.rowsUnindexed(), o.toString());
    }
    // the old segment (no live fragment left) is kept for its model, next to the delta one
    assertEquals(2, segments("vix").size());
    TreeMap<Long, float[]> rows = live();
    assertEquals(300, rows.size());
    checkSearch("ivf_flat", rows, 7299);
    checkSearch("btree", rows, 7299);
    checkSearch("fts", rows, 7299);
    // and a second one does not pile segments up: the delta of the first is the one kept
    ViewCommitResult again = ViewCommit.builder(uri, version()).replaceAllRows()
        .addFragments(rows(8000, 8300, 100)).build().commit();
    assertEquals(IndexOutcome.Action.UPDATED, outcome(again, "vix").action());
    assertEquals(2, segments("vix").size());
    checkSearch("ivf_flat", live(), 8299);
  }

  /** A full rebuild to more than twice the rows the model covered retrains it (recipe). */
  @Test
  void aFullRebuildOfMostlyNewRowsBuildsTheVectorIndexAgain() {
    index("ivf_flat", "vix");
    recordRecipe("ivf_flat", "vix");
    ViewCommitResult r = ViewCommit.builder(uri, version()).replaceAllRows()
        .addFragments(rows(7000, 7900, 300)).build().commit();
    IndexOutcome o = outcome(r, "vix");
    assertEquals(IndexOutcome.Action.REBUILT, o.action(), o.toString());
    assertEquals(1, segments("vix").size());
    assertEquals(900, o.rowsIndexed(), o.toString());
    checkSearch("ivf_flat", live(), 7899);
  }

  /**
   * Compaction (fragments removed, their rows written again unchanged) gives the vector index a
   * delta segment, not a retrain.
   */
  @Test
  void aCompactionKeepsEveryIndex() {
    index("ivf_flat", "vix");
    recordRecipe("ivf_flat", "vix");
    index("btree", "ix");
    List<FragmentMetadata> rewritten = rows(200, 400, 0);
    ViewCommitResult r = ViewCommit.builder(uri, version()).removeFragments(List.of(2, 3))
        .addFragments(rewritten).build().commit();
    IndexOutcome v = outcome(r, "vix");
    assertEquals(IndexOutcome.Action.UPDATED, v.action(), v.toString());
    assertEquals(200, v.rowsAdded(), v.toString());
    assertEquals(2, segments("vix").size());
    assertEquals(IndexOutcome.Action.UPDATED, outcome(r, "ix").action());
    TreeMap<Long, float[]> rows = live();
    assertEquals(400, rows.size());
    checkSearch("ivf_flat", rows, 399);
    checkSearch("btree", rows, 399);
  }

  /** A vector index with a recipe is built again once it would pass the segment bound. */
  @Test
  void tooManyDeltaSegmentsBuildTheVectorIndexAgain() {
    index("ivf_flat", "vix");
    recordRecipe("ivf_flat", "vix");
    for (int i = 1; i < IndexCarry.MAX_VECTOR_SEGMENTS; i++) {
      ViewCommit.builder(uri, version()).addFragments(rows(1000 + i * 10, 1005 + i * 10, 0))
          .build().commit();
    }
    assertEquals(IndexCarry.MAX_VECTOR_SEGMENTS, segments("vix").size());
    ViewCommitResult r = refresh(0, 5000, 5);
    IndexOutcome o = outcome(r, "vix");
    assertEquals(IndexOutcome.Action.REBUILT, o.action(), o.toString());
    assertEquals(1, o.segments());
    checkSearch("ivf_flat", live(), 5004);
  }

  /** A commit that meets another one changes nothing; its retry carries the indexes. */
  @Test
  void aConflictChangesNothingAndTheRetryCarriesTheIndexes() {
    index("btree", "ix");
    long read = version();
    ViewCommit stale = ViewCommit.builder(uri, read).deleteWhere("id = 1")
        .addFragments(rows(1000, 1010, 0)).build();
    refresh(5, 2000, 10); // another commit lands first
    long now = version();
    assertThrows(ViewCommitConflictException.class, stale::commit);
    assertEquals(now, version());
    assertEquals(1, segments("ix").size());
    ViewCommitResult r = ViewCommit.builder(uri, now).deleteWhere("id = 1")
        .addFragments(rows(1000, 1010, 0)).build().commit();
    assertEquals(IndexOutcome.Action.UPDATED, outcome(r, "ix").action());
    TreeMap<Long, float[]> rows = live();
    assertFalse(rows.containsKey(1L));
    checkSearch("btree", rows, 1009);
  }

  /** EXPLAIN REFRESH's lines: what the next commit does to each index. */
  @Test
  void theIndexPlanSaysWhatTheNextCommitDoes() {
    index("ivf_flat", "vix");
    recordRecipe("ivf_flat", "vix");
    index("btree", "ix");
    try (Dataset ds = Dataset.open(uri, allocator)) {
      assertEquals(List.of("ix (btree, 1 segment): carried over; new rows merged into it",
          "vix (vector, 1 segment): carried over; new rows get a delta segment (2 of at most "
              + IndexCarry.MAX_VECTOR_SEGMENTS + ")"), ViewCommit.indexPlan(ds, false, false));
      assertEquals(List.of("ix (btree, 1 segment): carried over; new rows merged into it",
          "vix (vector, 1 segment): carried over; the new rows get a delta segment, or it is "
              + "built again from its recipe ivf_flat (vec) WITH {num_partitions=2} if they are "
              + "more than twice the rows it covers"), ViewCommit.indexPlan(ds, true, false));
    }
  }

  /** Recording a recipe adds its key to the view's config and keeps every other key. */
  @Test
  void recordingARecipeKeepsTheViewsOtherConfig() {
    try (Dataset ds = Dataset.open(uri, allocator)) {
      ds.updateConfig(Map.of("lance.auto_cleanup.interval", "20", "lancerest::x", "kept"));
    }
    recordRecipe("ivf_flat", "vix");
    recordRecipe("ivf_pq", "pix");
    try (Dataset ds = Dataset.open(uri, allocator)) {
      Map<String, String> c = ds.getConfig();
      assertEquals("20", c.get("lance.auto_cleanup.interval"), c.toString());
      assertEquals("kept", c.get("lancerest::x"), c.toString());
      assertTrue(c.containsKey(IndexRecipe.KEY_PREFIX + "vix"), c.toString());
      assertTrue(c.containsKey(IndexRecipe.KEY_PREFIX + "pix"), c.toString());
    }
  }

  private void cleanupBefore(long version) {
    try (Dataset ds = Dataset.open(uri, allocator)) {
      ds.cleanupWithPolicy(org.lance.cleanup.CleanupPolicy.builder().withBeforeVersion(version)
          .build());
    }
  }

  /**
   * A cleanup of the versions after the view's last Overwrite (a btree merge gave the index a
   * new uuid there) does not stop later commits: each refresh still lands and updates it.
   */
  @Test
  void aCleanupOfOldVersionsDoesNotBlockLaterCommits() {
    index("btree", "ix");
    index("fts", "fts");
    refresh(0, 1000, 20);
    refresh(1, 1100, 20);
    cleanupBefore(version());
    for (int round = 2; round < 4; round++) {
      ViewCommitResult r = refresh(round, 1000 + round * 100, 20);
      for (String name : List.of("ix", "fts")) {
        assertEquals(IndexOutcome.Action.UPDATED, outcome(r, name).action(),
            outcome(r, name).toString());
      }
      cleanupBefore(version());
    }
    TreeMap<Long, float[]> rows = live();
    checkSearch("btree", rows, 1319);
    checkSearch("fts", rows, 1319);
  }

  /**
   * Killed between the Overwrite and the registration, then the user created the index again
   * under the same name: the user's index is the one kept, registered once, and the owed
   * segments are not owed any more.
   */
  @Test
  void anIndexCreatedAgainWhileOneIsOwedIsKept() {
    index("btree", "ix");
    ViewCommit first = ViewCommit.builder(uri, version()).deleteWhere("id % 9 = 0")
        .addFragments(rows(1000, 1050, 0)).build();
    try (Dataset ds = Dataset.open(uri, allocator)) {
      first.overwrite(allocator, ds, () -> { });
    }
    index("btree", "ix"); // the user's answer to the missing index
    List<java.util.UUID> users = segments("ix").stream().map(Index::uuid).toList();
    for (int round = 1; round < 3; round++) {
      ViewCommitResult r = refresh(round, 2000 + round * 100, 20);
      IndexOutcome o = outcome(r, "ix");
      assertEquals(IndexOutcome.Action.UPDATED, o.action(), o.toString());
      assertEquals(1, segments("ix").size());
      assertEquals(live().size(), o.rowsIndexed(), o.toString());
    }
    assertEquals(1, users.size());
    checkSearch("btree", live(), 2219);
  }

  /**
   * Owed segments whose files a cleanup removed are never registered (no version lists them,
   * so no search can meet the missing files), and a plain filter keeps working.
   */
  @Test
  void owedSegmentsWithoutFilesAreNeverRegistered() throws IOException {
    index("btree", "ix");
    List<java.util.UUID> before = segments("ix").stream().map(Index::uuid).toList();
    ViewCommit first = ViewCommit.builder(uri, version()).deleteWhere("id % 9 = 0").build();
    long overwrite;
    try (Dataset ds = Dataset.open(uri, allocator)) {
      overwrite = first.overwrite(allocator, ds, () -> { }).version();
    }
    for (java.util.UUID u : before) {
      deleteTree(Path.of(uri, "_indices", u.toString()));
    }
    ViewCommitResult r = refresh(1, 2000, 20);
    IndexOutcome o = outcome(r, "ix");
    assertEquals(IndexOutcome.Action.LOST, o.action(), o.toString());
    for (long v = overwrite; v <= version(); v++) {
      try (Dataset ds = Dataset.open(uri, allocator); Dataset at = ds.checkoutVersion(v)) {
        assertEquals(List.of(), at.getIndexes().stream().filter(i -> before.contains(i.uuid()))
            .toList(), "version " + v + " lists a segment whose files are gone");
      }
    }
    assertEquals(List.of(5L), scan(new ScanOptions.Builder().columns(List.of("id"))
        .filter("id = 5").build()));
    ViewCommitResult again = refresh(2, 3000, 5);
    assertEquals(List.of(), again.indexes(), "nothing owed any more");
  }

  /**
   * With no commit to make (a refresh with nothing to do, maintenance), what an interrupted
   * commit owes is registered on its own, before a cleanup could remove the files.
   */
  @Test
  void owedIndexesAreRegisteredWithoutACommitOfData() {
    index("btree", "ix");
    index("ivf_flat", "vix");
    ViewCommit first = ViewCommit.builder(uri, version()).deleteWhere("id % 9 = 0")
        .addFragments(rows(1000, 1050, 0)).build();
    try (Dataset ds = Dataset.open(uri, allocator)) {
      first.overwrite(allocator, ds, () -> { });
    }
    String done = ViewCommit.registerOwedIndexes(LanceLocation.of(uri, Map.of()));
    assertTrue(done != null && done.contains("ix: updated, 50 rows added")
        && done.contains("vix: updated, 50 rows added"), done);
    try (Dataset ds = Dataset.open(uri, allocator)) {
      assertEquals(List.of("ix", "vix"), ds.listIndexes().stream().distinct().sorted().toList());
    }
    assertEquals(null, ViewCommit.registerOwedIndexes(LanceLocation.of(uri, Map.of())),
        "registered once");
    cleanupBefore(version());
    TreeMap<Long, float[]> rows = live();
    checkSearch("btree", rows, 1049);
    checkSearch("ivf_flat", rows, 1049);
  }

  /** The Overwrite of a commit deleting ids % 9 == 0 and adding ids 1000..1049, landed. */
  private ViewCommit.Landed overwriteOnly(ViewCommit c) {
    try (Dataset ds = Dataset.open(uri, allocator)) {
      return c.overwrite(allocator, ds, () -> { });
    }
  }

  private List<java.util.UUID> uuids(String name) {
    return segments(name).stream().map(Index::uuid).sorted().toList();
  }

  /**
   * A user's DROP INDEX and CREATE INDEX (replace) landing between the commit's registration
   * and its update are left as the user made them: the dropped index does not come back, the
   * replaced one does not get a second segment over the same fragments; an index nobody touched
   * is updated as usual, and the next refresh updates the user's index.
   */
  @Test
  void aUsersIndexStatementBetweenRegisterAndUpdateIsLeftAsTheUserMadeIt() {
    index("btree", "ix");
    index("ivf_flat", "vix");
    index("fts", "fts");
    ViewCommit c = ViewCommit.builder(uri, version()).deleteWhere("id % 9 = 0")
        .addFragments(rows(1000, 1050, 0)).build();
    ViewCommit.Landed landed = overwriteOnly(c);
    IndexRegistration.Registered reg = c.registerIndexes(allocator, landed);
    try (Dataset ds = Dataset.open(uri, allocator)) {
      assertEquals(List.of("fts", "ix", "vix"), ds.listIndexes().stream().sorted().toList());
      ds.dropIndex("ix");
    }
    index("ivf_flat", "vix");
    List<java.util.UUID> users = uuids("vix");
    ViewCommitResult r = c.updateIndexes(allocator, landed, reg);
    IndexOutcome ix = outcome(r, "ix");
    assertEquals(IndexOutcome.Action.SKIPPED, ix.action(), ix.toString());
    assertTrue(ix.toString().startsWith("ix: skipped (another commit dropped it (a DROP INDEX) "
        + "while this commit was carrying it;"), ix.toString());
    assertEquals(List.of(), segments("ix"), "the dropped index stays dropped");
    IndexOutcome vix = outcome(r, "vix");
    assertEquals(IndexOutcome.Action.SKIPPED, vix.action(), vix.toString());
    assertTrue(vix.detail().startsWith("another commit changed it"), vix.toString());
    assertEquals(users, uuids("vix"), "the user's index alone, not updated over");
    assertEquals(IndexOutcome.Action.UPDATED, outcome(r, "fts").action());
    assertEquals(r.latestVersion(), version());
    checkSearch("ivf_flat", live(), 1049);
    checkSearch("fts", live(), 1049);

    ViewCommitResult next = refresh(1, 2000, 20);
    assertEquals(List.of("fts", "vix"), next.indexes().stream().map(IndexOutcome::name)
        .sorted().toList(), "the dropped index is not owed");
    assertEquals(IndexOutcome.Action.UPDATED, outcome(next, "vix").action());
    assertEquals(2, segments("vix").size());
    assertEquals(List.of(), segments("ix"));
    checkSearch("ivf_flat", live(), 2019);
  }

  /**
   * Another commit of the view (here a no-op refresh of another driver) registered and updated
   * the carried segments before this commit's registration: this commit leaves them as they
   * are instead of adding a second delta segment for the same rows.
   */
  @Test
  void segmentsAnotherCommitRegisteredAreNotUpdatedTwice() {
    index("btree", "ix");
    index("ivf_flat", "vix");
    ViewCommit c = ViewCommit.builder(uri, version()).deleteWhere("id % 9 = 0")
        .addFragments(rows(1000, 1050, 0)).build();
    ViewCommit.Landed landed = overwriteOnly(c);
    String other = ViewCommit.registerOwedIndexes(LanceLocation.of(uri, Map.of()));
    assertTrue(other != null && other.contains("vix: updated, 50 rows added"), other);
    List<java.util.UUID> vix = uuids("vix");
    List<java.util.UUID> ix = uuids("ix");
    assertEquals(2, vix.size());
    ViewCommitResult r = c.carryIndexes(allocator, landed);
    for (String name : List.of("ix", "vix")) {
      IndexOutcome o = outcome(r, name);
      assertEquals(IndexOutcome.Action.SKIPPED, o.action(), o.toString());
      assertTrue(o.detail().startsWith("another commit of the view registered it"),
          o.toString());
      assertEquals(0, o.rowsUnindexed(), o.toString());
    }
    assertEquals(vix, uuids("vix"));
    assertEquals(ix, uuids("ix"));
    TreeMap<Long, float[]> rows = live();
    checkSearch("btree", rows, 1049);
    checkSearch("ivf_flat", rows, 1049);
  }

  /**
   * Rows of a fragment that left the table whole (ids 300..399) and rows deleted from kept
   * fragments are never returned by a search after the indexes are carried: a nearest search
   * probing every partition for more rows than the table holds returns exactly the live rows,
   * and a full-text search of words every departed row holds finds none of them.
   */
  @Test
  void departedAndDeletedRowsAreNeverReturnedBySearch() {
    index("ivf_flat", "vix");
    index("fts", "fts");
    ViewCommitResult r = ViewCommit.builder(uri, version()).deleteWhere("id >= 300 OR id % 7 = 0")
        .addFragments(rows(5000, 5020, 0)).build().commit();
    assertEquals(IndexOutcome.Action.UPDATED, outcome(r, "vix").action());
    assertEquals(IndexOutcome.Action.UPDATED, outcome(r, "fts").action());
    try (Dataset ds = Dataset.open(uri, allocator)) {
      assertFalse(ds.getFragments().stream().anyMatch(f -> f.getId() == 3), "fragment 3 left");
      assertTrue(ds.getIndexes().stream().anyMatch(i -> i.fragments().orElse(List.of())
          .contains(3)), "a carried bitmap still names fragment 3");
    }
    TreeMap<Long, float[]> rows = live();
    for (long probe : List.of(350L, 7L, 5010L)) {
      List<Long> got = nearest(vector(probe), 1000);
      assertEquals(rows.keySet(), new TreeSet<>(got), "nearest to " + probe);
      assertEquals(rows.size(), got.size(), "each row once");
    }
    for (long gone : List.of(300L, 349L, 399L, 7L, 294L)) {
      assertEquals(List.of(), fts("doc" + gone), "full-text search of doc" + gone);
    }
    checkSearch("fts", rows, 5019);
  }
}
