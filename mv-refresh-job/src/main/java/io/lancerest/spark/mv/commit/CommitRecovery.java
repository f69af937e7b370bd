package io.lancerest.spark.mv.commit;

import io.lancerest.spark.connector.LanceLocation;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Transaction;
import org.lance.operation.Restore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a {@link ViewCommit} makes of a commit that did not simply land as the next version: a
 * conflict, a failure whose answer was lost although the commit landed, or an Overwrite that
 * landed over a concurrent commit and is rolled back.
 */
final class CommitRecovery {
  // The commit's own log category: these lines are part of the commit's story.
  private static final Logger LOG = LoggerFactory.getLogger(ViewCommit.class);
  private final LanceLocation table;
  private final String location;
  private final long readVersion;

  CommitRecovery(LanceLocation table, long readVersion) {
    this.table = table;
    this.location = table.uri();
    this.readVersion = readVersion;
  }

  /** The view table at {@code version}, or its latest version when null. */
  Dataset open(BufferAllocator allocator, Long version) {
    return table.open(allocator, version);
  }

  ViewCommitConflictException conflict(String what, Throwable cause) {
    return new ViewCommitConflictException("View table '" + location + "' was modified by "
        + "another commit after version " + readVersion + " (" + what + "); this change was "
        + "not applied. Re-run the refresh: it starts from the latest version.", cause);
  }

  /**
   * Restores the version before {@code committed}, an Overwrite that landed over concurrent
   * commits, when nothing followed it; otherwise says how to restore it by hand.
   */
  void undoOverwrite(BufferAllocator allocator, long committed) {
    long head;
    try (Dataset latest = open(allocator, null)) {
      head = latest.latestVersion();
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      head = -1;
    }
    if (head != committed) {
      // Restoring would also discard what was committed after this change (its answer was
      // lost and found later): leave the view to its owner.
      throw new ViewCommitException("View table '" + location + "': this commit (version "
          + committed + ") landed over concurrent " + versions(readVersion + 1, committed - 1)
          + ", and " + (head < 0 ? "the latest version cannot be read"
          : "versions up to " + head + " followed it") + ", so it was not rolled back "
          + "automatically. " + holdsThisChange(committed, ""));
    }
    restoreBefore(allocator, committed);
  }

  /**
   * Restores version {@code committed - 1} in a Restore commit read at {@code committed}, and
   * checks that nothing landed in between.
   *
   * <p>Why the check comes after: lance-core rebases a Restore over every concurrent commit
   * (its conflict resolver lets a Restore pass any other operation), so a commit that lands
   * after {@link #undoOverwrite} saw {@code committed} as the latest version would be
   * discarded without an error. Read at {@code committed}, the Restore lands as {@code
   * committed + 1} exactly when nothing came in between; landed later, it discarded what did,
   * and restoring the version just before it puts that back ({@link #putBack}).
   */
  void restoreBefore(BufferAllocator allocator, long committed) {
    long landed = rollBack(allocator, committed);
    if (landed == committed + 1) {
      LOG.info("View table '{}': this commit (version {}) landed over concurrent commits "
          + "{}..{}; rolled back by restoring version {} as version {}", location, committed,
          readVersion + 1, committed - 1, committed - 1, landed);
      return;
    }
    putBack(allocator, committed, landed);
  }

  /** Commits the rollback: a Restore of {@code committed - 1} read at {@code committed}. */
  long rollBack(BufferAllocator allocator, long committed) {
    return restore(allocator, committed, committed - 1, "this commit (version " + committed
        + ") overwrote a concurrent commit and restoring version " + (committed - 1), () ->
        holdsThisChange(committed, ""));
  }

  /**
   * The rollback of {@code committed} landed as version {@code landed}, later than {@code
   * committed + 1}, so it discarded the commits in between: restores version {@code landed - 1},
   * which holds this change and them, and throws what the view holds now. That Restore can
   * itself pass commits landing meanwhile (it is not chased further: the message names them).
   */
  void putBack(BufferAllocator allocator, long committed, long landed) {
    String discarded = versions(committed + 1, landed - 1);
    String story = "this commit (version " + committed + ") landed over concurrent "
        + versions(readVersion + 1, committed - 1) + ", and its rollback (version " + landed
        + ") discarded " + discarded + ", committed meanwhile";
    long back = restore(allocator, landed, landed - 1, story + "; restoring version "
        + (landed - 1) + " to put it back", () -> "The view holds version " + (committed - 1)
        + " again, without this change and without " + discarded + " (version " + (landed - 1)
        + " holds it); a refresh continues from the view as it is. Run the refresh again.");
    String inTurn = back == landed + 1 ? null : versions(landed + 1, back - 1);
    throw new ViewCommitException("View table '" + location + "': " + story + "; version "
        + (landed - 1) + " was restored as version " + back + " to put it back" + (inTurn == null
        ? "" : ", which in turn discarded " + inTurn + ", committed meanwhile (version "
        + (back - 1) + " holds it)") + ": the view holds this change and " + discarded + ". "
        + holdsThisChange(committed, inTurn == null ? "" : " Other writers kept committing to "
        + "the view meanwhile: let them finish first."));
  }

  /**
   * What a view that holds {@code committed} (an Overwrite over concurrent commits) lacks, and
   * what to do. Only refreshes and maintenance commit to a view, and each commit builds on the
   * one it read, so the view's rows and refresh state agree with each other.
   */
  private String holdsThisChange(long committed, String first) {
    return "What " + versions(readVersion + 1, committed - 1) + " committed is not in the view "
        + "(version " + (committed - 1) + " holds it), and a refresh continues from the view "
        + "as it is." + first + " Compare the view with its SELECT; if they differ, run the "
        + "refresh with force = true, which rebuilds the view. Restoring version "
        + (committed - 1) + " would undo this change and every version after it.";
  }

  /** {@code version 4}, or {@code versions 4..6}. */
  private static String versions(long from, long to) {
    return from == to ? "version " + from : "versions " + from + ".." + to;
  }

  /**
   * Commits a Restore of {@code version} read at {@code readAt}; returns where it landed. When
   * it fails, the error says that {@code what} failed and then {@code state}: what the view
   * holds without it.
   */
  private long restore(BufferAllocator allocator, long readAt, long version, String what,
      java.util.function.Supplier<String> state) {
    try (Dataset at = open(allocator, readAt);
        Transaction t = new Transaction.Builder().readVersion(readAt)
            .operation(Restore.builder().version(version).build()).build();
        Dataset restored = new CommitBuilder(at).execute(t)) {
      return restored.version();
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      throw new ViewCommitException("View table '" + location + "': " + what + " failed: "
          + LanceLocation.withoutUserInfo(String.valueOf(e.getMessage())) + ". "
          + state.get(), e);
    }
  }

  /**
   * The version this commit's transaction ({@code uuid}) landed as although lance-core reported
   * {@code failure}: an object store can apply the PUT of the manifest and lose its answer
   * (object_store does not retry a conditional PUT after a connection error, and a retry after
   * a 5xx can meet its own manifest as "already exists"). Every version after
   * {@code readVersion} is looked at, since lance-core may have rebased the commit; the caller
   * handles one that landed later than {@code readVersion + 1} as it does a rebase. When no
   * version holds it, {@code failure} is classified and thrown; when the versions cannot be
   * read, the failure says the commit may have landed.
   */
  long landedAnyway(BufferAllocator allocator, String uuid, Exception failure) {
    long latest;
    Long found = null;
    try (Dataset head = open(allocator, null)) {
      latest = head.latestVersion();
      for (long v = readVersion + 1; v <= latest && found == null; v++) {
        try (Dataset at = head.checkoutVersion(v)) {
          Optional<Transaction> txn = at.readTransaction();
          try {
            if (txn.map(x -> uuid.equals(x.uuid())).orElse(false)) {
              found = v;
            }
          } finally {
            txn.ifPresent(Transaction::close);
          }
        }
      }
    } catch (Exception unreadable) { // lance-core's IOException arrives undeclared
      ViewCommitException e = new ViewCommitException("Commit to view table '" + location
          + "' failed (" + failure.getMessage() + "), and reading its versions to see whether "
          + "the commit landed failed too (" + unreadable.getMessage() + "): the view may hold "
          + "this change or not. Read the view before running the refresh again", failure);
      e.addSuppressed(unreadable);
      throw e;
    }
    if (found != null) {
      LOG.warn("View table '{}': the commit failed ({}), but version {} holds this commit's "
          + "transaction {}: it landed", location, failure.getMessage(), found, uuid);
      return found;
    }
    throw classify(failure);
  }

  private RuntimeException classify(Exception e) {
    String m = String.valueOf(e.getMessage());
    String lower = m.toLowerCase(java.util.Locale.ROOT);
    if (lower.contains("conflict") || lower.contains("concurrent")
        || lower.contains("already exists")) {
      return conflict("lance-core: " + m, e);
    }
    return new ViewCommitNotAppliedException(
        "Commit to view table '" + location + "' failed; the view is unchanged: " + m, e);
  }
}
