package io.lancerest.spark.mv.commit;

import io.lancerest.spark.connector.LanceLocation;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.lance.Dataset;
import org.lance.Transaction;
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
          + "automatically. Compare the view with its SELECT; RESTORE TABLE … TO VERSION AS OF "
          + (committed - 1) + " undoes this change (and what followed it).");
    }
    try (Dataset previous = open(allocator, committed - 1)) {
      previous.restore();
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      throw new ViewCommitException("View table '" + location + "': this commit (version "
          + committed + ") overwrote a concurrent commit and restoring version "
          + (committed - 1) + " failed: " + e.getMessage() + ". Restore it by hand "
          + "(RESTORE TABLE … TO VERSION AS OF " + (committed - 1) + ").", e);
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
