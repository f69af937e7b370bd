package io.lancerest.spark.mv.commit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.connector.LanceLocation;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.ReadOptions;
import org.lance.Transaction;
import org.lance.operation.Overwrite;
import org.lance.operation.Restore;

/**
 * Rolling back a view commit that landed over concurrent commits, with another commit landing
 * while it is rolled back. Two handles, in a fixed order: the table of {@link LanceFixtures}
 * (source ids 0..9, version 3), an Append of ids 300..301 (version 4) that a view's Overwrite
 * read at version 3 then discarded (version 5, "committed"), and an Append of ids 400..401 that
 * lands after the rollback saw version 5 as the latest (version 6).
 */
class CommitRecoveryTest {
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
    assertEquals(4, LanceFixtures.append(allocator, uri, 300, 302));
    try (Dataset at3 = open(3L)) {
      // lance-core rebases an Overwrite over the Append: version 5 lacks ids 300..301
      Transaction t = new Transaction.Builder().readVersion(3L)
          .operation(Overwrite.builder().fragments(at3.getFragments().stream()
              .map(Fragment::metadata).toList()).schema(at3.getSchema()).build()).build();
      try (t; Dataset committed = new CommitBuilder(at3).execute(t)) {
        assertEquals(5, committed.version());
      }
    }
  }

  private Dataset open(Long version) {
    ReadOptions.Builder o = new ReadOptions.Builder();
    if (version != null) {
      o.setVersion(version);
    }
    return Dataset.open(allocator, uri, o.build());
  }

  private List<Long> ids() {
    return LanceFixtures.rows(allocator, uri).keySet().stream().sorted()
        .collect(Collectors.toList());
  }

  private static final List<Long> BASE = List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);

  private static List<Long> plus(long... more) {
    List<Long> out = new java.util.ArrayList<>(BASE);
    for (long m : more) {
      out.add(m);
    }
    out.sort(null);
    return out;
  }

  /**
   * What lance-core 4.0.0 does, and why the rollback cannot rely on a conflict: a Restore lands
   * over a commit made after the version it read, and that commit's rows are gone from the
   * latest version.
   */
  @Test
  void lanceCoreLetsARestoreDiscardACommitThatLandedAfterItsReadVersion() {
    // As the rollback did: version 5 checked as the latest, then version 4 restored from it.
    try (Dataset latest = open(null)) {
      assertEquals(5, latest.latestVersion());
    }
    try (Dataset previous = open(4L)) {
      assertEquals(6, LanceFixtures.append(allocator, uri, 400, 402), "the commit in between");
      previous.restore();
    }
    try (Dataset latest = open(null)) {
      assertEquals(7, latest.version(), "the Restore landed, after the Append");
    }
    assertEquals(plus(300, 301), ids(), "ids 400..401 are gone, with no error");

    // Committed as a transaction read at the version checked, it lands all the same.
    try (Dataset at7 = open(7L)) {
      assertEquals(8, LanceFixtures.append(allocator, uri, 500, 502));
      Transaction t = new Transaction.Builder().readVersion(7L)
          .operation(Restore.builder().version(5L).build()).build();
      try (t; Dataset restored = new CommitBuilder(at7).execute(t)) {
        assertEquals(9, restored.version());
      }
    }
    assertEquals(BASE, ids(), "ids 500..501 are gone too");
  }

  @Test
  void aRollbackWithNothingInBetweenRestoresTheVersionBefore() {
    new CommitRecovery(LanceLocation.of(uri, Map.of()), 3).undoOverwrite(allocator, 5);
    try (Dataset latest = open(null)) {
      assertEquals(6, latest.version());
    }
    assertEquals(plus(300, 301), ids(), "the rows the Overwrite discarded are back");
  }

  @Test
  void aCommitLandingWhileTheViewIsRolledBackIsPutBackAndTheChangeReported() {
    // The rollback saw version 5 as the latest; this Append lands before its Restore.
    assertEquals(6, LanceFixtures.append(allocator, uri, 400, 402));
    ViewCommitException e = assertThrows(ViewCommitException.class,
        () -> new CommitRecovery(LanceLocation.of(uri, Map.of()), 3)
            .restoreBefore(allocator, 5));
    assertEquals("View table '" + uri + "': this commit (version 5) landed over concurrent "
        + "version 4, and its rollback (version 7) discarded version 6, committed meanwhile; "
        + "version 6 was restored as version 8 to put it back: the view holds this change and "
        + "version 6. What version 4 committed is not in the view (version 4 holds it), and a "
        + "refresh continues from the view as it is. Compare the view with its SELECT; if they "
        + "differ, run the refresh with force = true, which rebuilds the view. Restoring "
        + "version 4 would undo this change and every version after it.", e.getMessage());
    try (Dataset latest = open(null)) {
      assertEquals(8, latest.version());
    }
    List<Long> ids = ids();
    assertEquals(plus(400, 401), ids, "the Append that landed in between is in the view");
    assertFalse(ids.contains(300L), "and version 4, which the message names, holds 300..301");
    try (Dataset v4 = open(4L)) {
      assertTrue(LanceFixtures.rows(v4).containsKey(300L));
    }
  }

  /**
   * The Restore that puts the discarded commit back passes a commit landing meanwhile in turn:
   * the two steps of {@link CommitRecovery#restoreBefore}, with that commit between them.
   */
  @Test
  void aCommitLandingWhileTheRollbackIsPutBackIsNamedInTheError() {
    CommitRecovery recovery = new CommitRecovery(LanceLocation.of(uri, Map.of()), 3);
    assertEquals(6, LanceFixtures.append(allocator, uri, 400, 402), "during the rollback");
    assertEquals(7, recovery.rollBack(allocator, 5));
    assertEquals(8, LanceFixtures.append(allocator, uri, 500, 502), "during the put-back");
    ViewCommitException e = assertThrows(ViewCommitException.class,
        () -> recovery.putBack(allocator, 5, 7));
    assertEquals("View table '" + uri + "': this commit (version 5) landed over concurrent "
        + "version 4, and its rollback (version 7) discarded version 6, committed meanwhile; "
        + "version 6 was restored as version 9 to put it back, which in turn discarded version "
        + "8, committed meanwhile (version 8 holds it): the view holds this change and version "
        + "6. What version 4 committed is not in the view (version 4 holds it), and a refresh "
        + "continues from the view as it is. Other writers kept committing to the view "
        + "meanwhile: let them finish first. Compare the view with its SELECT; if they differ, "
        + "run the refresh with force = true, which rebuilds the view. Restoring version 4 "
        + "would undo this change and every version after it.",
        e.getMessage());
    assertEquals(plus(400, 401), ids(), "this change and version 6, without version 8");
    try (Dataset v8 = open(8L)) {
      assertTrue(LanceFixtures.rows(v8).containsKey(500L), "which the message names");
    }
  }
}
