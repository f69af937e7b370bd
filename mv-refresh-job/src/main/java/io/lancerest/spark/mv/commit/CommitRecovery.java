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
          + committed + ") landed over concurrent commits " + (readVersion + 1) + ".."
          + (committed - 1) + ", and " + (head < 0 ? "the latest version cannot be read"
          : "versions up to " + head + " followed it") + ", so it was not rolled back "
          + "automatically. " + byHand(committed));
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
   * and restoring the version just before it puts that back (the view then holds this change
   * and what followed, as when the check saw them first).
   */
  void restoreBefore(BufferAllocator allocator, long committed) {
    long landed = restore(allocator, committed, committed - 1,
        "this commit (version " + committed + ") overwrote a concurrent commit and restoring "
        + "version " + (committed - 1));
    if (landed == committed + 1) {
      LOG.info("View table '{}': this commit (version {}) landed over concurrent commits "
          + "{}..{}; rolled back by restoring version {} as version {}", location, committed,
          readVersion + 1, committed - 1, committed - 1, landed);
      return;
    }
    String discarded = (committed + 1) + ".." + (landed - 1);
    long back = restore(allocator, landed, landed - 1, "rolling back this commit (version "
        + committed + ") discarded versions " + discarded + ", committed meanwhile, and "
        + "restoring version " + (landed - 1) + " to put them back");
    throw new ViewCommitException("View table '" + location + "': this commit (version "
        + committed + ") landed over concurrent commits " + (readVersion + 1) + ".."
        + (committed - 1) + "; versions " + discarded + " were committed while it was rolled "
        + "back, and the rollback (version " + landed + ") discarded them, so version "
        + (landed - 1) + " was restored as version " + back
        + (back == landed + 1 ? "" : " (which discarded versions " + (landed + 1) + ".."
        + (back - 1) + " in turn)") + ": the view holds this change again. "
        + byHand(committed));
  }

  private static String byHand(long committed) {
    return "Compare the view with its SELECT; RESTORE TABLE … TO VERSION AS OF "
        + (committed - 1) + " undoes this change (and what followed it).";
  }

  /** Commits a Restore of {@code version} read at {@code readAt}; returns where it landed. */
  private long restore(BufferAllocator allocator, long readAt, long version, String what) {
    try (Dataset at = open(allocator, readAt);
        Transaction t = new Transaction.Builder().readVersion(readAt)
            .operation(Restore.builder().version(version).build()).build();
        Dataset restored = new CommitBuilder(at).execute(t)) {
      return restored.version();
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      throw new ViewCommitException("View table '" + location + "': " + what + " failed: "
          + e.getMessage() + ". Restore it by hand (RESTORE TABLE … TO VERSION AS OF "
          + version + ").", e);
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
