package io.lancerest.spark.mv.commit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.scalar.ScalarIndexParams;

/**
 * The atomic view commit on real local Lance tables: a table of two fragments (source ids 0..4
 * and 5..9, stable row ids 0..9) at version 3.
 */
class ViewCommitTest {
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

  @BeforeEach
  void table() {
    uri = dir.resolve("view.lance").toString();
    LanceFixtures.twoFragments(allocator, uri);
  }

  private long version() {
    try (Dataset ds = Dataset.open(uri, allocator)) {
      return ds.version();
    }
  }

  @Test
  void oneVersionCarriesDeletionsNewRowsSchemaMetadataWatermarkAndConfig() {
    List<FragmentMetadata> written = LanceFixtures.fragments(allocator, uri, 100, 103);
    ViewCommitResult r = ViewCommit.builder(uri, 3)
        .deleteWhere("__source_row_id IN (1, 7, 8)")
        .deleteRowAddresses(List.of(3L)) // fragment 0, offset 3: source id 3
        .addFragments(written)
        .schemaMetadata(Map.of("geneva::view::version", "2"))
        .fieldMetadata("__source_row_id", Map.of("geneva::mv::last_refreshed_version", "42"))
        .config(Map.of("lancerest.mv.watermark", "42"))
        .build().commit();

    assertEquals(new ViewCommitResult(3, 4, 4, 3, 1, List.of(), 4), r);
    try (Dataset ds = Dataset.open(uri, allocator)) {
      assertEquals(4, ds.version());
      assertEquals(List.of(0L, 2L, 4L, 5L, 6L, 9L, 100L, 101L, 102L),
          new ArrayList<>(LanceFixtures.rows(ds).keySet()));
      assertEquals(Map.of("geneva::view::version", "2"), ds.getSchema().getCustomMetadata());
      assertEquals(Map.of("geneva::mv::last_refreshed_version", "42"),
          ds.getSchema().findField("__source_row_id").getMetadata());
      assertEquals("42", ds.getConfig().get("lancerest.mv.watermark"));
      // Time travel still shows the previous content: the change is one version.
      try (Dataset old = ds.checkoutVersion(3)) {
        assertEquals(10, old.countRows());
        assertEquals(Map.of(), old.getSchema().getCustomMetadata());
      }
    }
  }

  @Test
  void keptRowsKeepTheirStableRowIdsAndNewRowsGetFreshOnes() {
    Map<Long, List<Object>> before = LanceFixtures.rows(allocator, uri);
    ViewCommit.builder(uri, 3).deleteWhere("__source_row_id = 6")
        .addFragments(LanceFixtures.fragments(allocator, uri, 100, 103)).build().commit();
    ViewCommit.builder(uri, 4).deleteWhere("__source_row_id = 100")
        .addFragments(LanceFixtures.fragments(allocator, uri, 200, 202)).build().commit();

    Map<Long, List<Object>> after = LanceFixtures.rows(allocator, uri);
    for (long id : List.of(0L, 1L, 2L, 3L, 4L, 5L, 7L, 8L, 9L)) {
      assertEquals(before.get(id).get(0), after.get(id).get(0), "row id of source row " + id);
    }
    Set<Object> rowIds = new HashSet<>();
    after.values().forEach(v -> rowIds.add(v.get(0)));
    assertEquals(after.size(), rowIds.size(), "row ids are unique: " + after);
    // 10..12 went to the first batch, 13..14 to the second; ids are never reused.
    assertEquals(List.of(11L, 12L, 13L, 14L), List.of(after.get(101L).get(0),
        after.get(102L).get(0), after.get(200L).get(0), after.get(201L).get(0)));
  }

  @Test
  void anIndexSurvivesTheOverwriteAndIsReported() {
    try (Dataset ds = Dataset.open(uri, allocator)) {
      ds.createIndex(List.of("__source_row_id"), IndexType.BTREE, Optional.of("sid_idx"),
          IndexParams.builder().setScalarIndexParams(ScalarIndexParams.create("btree")).build(),
          true);
    }
    ViewCommitResult r = ViewCommit.builder(uri, 4).deleteWhere("__source_row_id = 1")
        .build().commit();
    assertEquals(List.of("sid_idx: carried, 9 of 9 rows indexed"),
        r.indexes().stream().map(IndexOutcome::toString).toList());
    assertEquals(5, r.version());
    assertEquals(6, r.latestVersion(), "the Overwrite, then the CreateIndex registering it");
    try (Dataset ds = Dataset.open(uri, allocator)) {
      assertEquals(List.of("sid_idx"), ds.listIndexes());
      assertEquals(9, ds.countRows());
    }
  }

  @Test
  void deletingEveryRowOfAFragmentDropsTheFragment() {
    ViewCommit.builder(uri, 3).deleteWhere("__source_row_id < 5").build().commit();
    try (Dataset ds = Dataset.open(uri, allocator)) {
      assertEquals(1, ds.getFragments().size());
      assertEquals(List.of(5L, 6L, 7L, 8L, 9L), new ArrayList<>(LanceFixtures.rows(ds).keySet()));
    }
  }

  @Test
  void replaceAllRowsKeepsOnlyTheNewFragments() {
    ViewCommitResult r = ViewCommit.builder(uri, 3).replaceAllRows()
        .addFragments(LanceFixtures.fragments(allocator, uri, 50, 52))
        .schemaMetadata(Map.of("geneva::view::base_table_version", "7")).build().commit();
    assertEquals(10, r.rowsDeleted());
    try (Dataset ds = Dataset.open(uri, allocator)) {
      assertEquals(List.of(50L, 51L), new ArrayList<>(LanceFixtures.rows(ds).keySet()));
      assertEquals("7", ds.getSchema().getCustomMetadata().get("geneva::view::base_table_version"));
    }
  }

  @Test
  void twoCommitsReadAtTheSameVersionConflictAndTheLoserChangesNothing() {
    ViewCommit first = ViewCommit.builder(uri, 3).deleteWhere("__source_row_id = 0").build();
    ViewCommit second = ViewCommit.builder(uri, 3)
        .addFragments(LanceFixtures.fragments(allocator, uri, 100, 101)).build();
    first.commit();
    ViewCommitConflictException e =
        assertThrows(ViewCommitConflictException.class, () -> second.commit());
    assertEquals("View table '" + uri + "' was modified by another commit after version 3 "
        + "(version 4 exists); this change was not applied. Re-run the refresh: it starts from "
        + "the latest version.", e.getMessage());
    assertEquals(4, version());
    assertEquals(9, LanceFixtures.rows(allocator, uri).size());
  }

  @Test
  void lanceCoreConflictOnRacingOverwritesIsClassifiedAsConflict() {
    ViewCommit first = ViewCommit.builder(uri, 3).deleteWhere("__source_row_id = 0").build();
    ViewCommit second = ViewCommit.builder(uri, 3).deleteWhere("__source_row_id = 1").build();
    // The racing commit lands after 'second' passed its stale-version check.
    ViewCommitConflictException e =
        assertThrows(ViewCommitConflictException.class, () -> second.commit(first::commit));
    assertTrue(e.getMessage().contains("(lance-core: Retryable commit conflict for version 4"),
        e.getMessage());
    assertEquals(4, version());
    assertTrue(LanceFixtures.rows(allocator, uri).containsKey(1L));
  }

  @Test
  void anAppendThatSlipsInBeforeTheCommitIsNotLost() {
    ViewCommit refresh = ViewCommit.builder(uri, 3).deleteWhere("__source_row_id = 0").build();
    // lance-core would rebase the Overwrite over this Append and drop its rows.
    ViewCommitConflictException e = assertThrows(ViewCommitConflictException.class,
        () -> refresh.commit(() -> LanceFixtures.append(allocator, uri, 300, 302)));
    assertTrue(e.getMessage().contains("(versions 4..4 were committed concurrently; this change "
        + "(version 5) was rolled back by restoring version 4)"), e.getMessage());
    Map<Long, List<Object>> rows = LanceFixtures.rows(allocator, uri);
    assertEquals(12, rows.size());
    assertTrue(rows.containsKey(300L) && rows.containsKey(0L), rows.toString());
  }

  @Test
  void aCrashBeforeTheCommitLeavesThePreviousVersion() {
    // A task wrote its fragments, then the job died: nothing references them.
    LanceFixtures.fragments(allocator, uri, 100, 110);
    // A commit that fails while preparing (bad predicate) changes nothing either.
    ViewCommitException e = assertThrows(ViewCommitException.class, () ->
        ViewCommit.builder(uri, 3).deleteWhere("no_such_column = 1")
            .addFragments(LanceFixtures.fragments(allocator, uri, 200, 201)).build()
            .commit());
    assertTrue(e.getMessage().startsWith("Cannot evaluate delete predicate 'no_such_column = 1' "
        + "on view table '" + uri + "': "), e.getMessage());
    assertEquals(3, version());
    assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L),
        new ArrayList<>(LanceFixtures.rows(allocator, uri).keySet()));
  }

  @Test
  void aReadVersionThatCannotBeOpenedIsACommitThatDidNotLand() {
    ViewCommitNotAppliedException e = assertThrows(ViewCommitNotAppliedException.class, () ->
        ViewCommit.builder(uri, 9).config(Map.of("k", "v")).build().commit());
    assertTrue(e.getMessage().startsWith("Cannot open view table at '" + uri + "' version 9: ")
        && e.getMessage().endsWith("; nothing was committed"), e.getMessage());
    assertEquals(3, version());
  }

  @Test
  void fieldMetadataForAnUnknownColumnIsRejected() {
    ViewCommitException e = assertThrows(ViewCommitException.class, () ->
        ViewCommit.builder(uri, 3).fieldMetadata("nope", Map.of("k", "v")).build()
            .commit());
    assertEquals("Field metadata names columns [nope] that view table '" + uri
        + "' does not have", e.getMessage());
    assertEquals(3, version());
  }
}
