package io.lancerest.spark.mv.commit;

import static io.lancerest.spark.mv.commit.LanceErrors.message;

import io.lancerest.spark.connector.LanceLocation;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Transaction;
import org.lance.index.Index;
import org.lance.operation.CreateIndex;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first step after a carrying Overwrite landed: the CreateIndex that registers the carried
 * segments again unchanged, told apart from one another commit made (its answer lost, or a
 * concurrent commit of the view that owed the same segments).
 */
final class IndexRegistration {
  // The commit's own log category: these lines are part of the commit's story.
  private static final Logger LOG = LoggerFactory.getLogger(ViewCommit.class);

  private final IndexCarry carry;

  IndexRegistration(IndexCarry carry) {
    this.carry = carry;
  }

  /**
   * What {@link #register} did: the segments this commit registered, by index name (the ones it
   * brings up to date), and the outcomes of the indexes it leaves as they are.
   */
  record Registered(long version, Map<String, List<Index>> ours, List<IndexOutcome> done) {}

  /** Registers the carried segments on {@code version}, the Overwrite that carried them. */
  Registered register(LanceLocation table, BufferAllocator allocator, long version) {
    List<IndexOutcome> done = new ArrayList<>();
    Map<String, List<Index>> ours = new TreeMap<>();
    if (carry.carried().isEmpty()) {
      return new Registered(version, ours, done);
    }
    Map<String, List<Index>> names = IndexCarry.byName(carry.carried());
    Set<String> byOthers = new HashSet<>();
    Map<String, String> failed = register(table, allocator, version, names, byOthers);
    for (Map.Entry<String, List<Index>> e : names.entrySet()) {
      String failure = failed.get(e.getKey());
      boolean vector = carry.isVector(e.getValue().get(0));
      if (failure != null) {
        done.add(carry.log(new IndexOutcome(e.getKey(), vector, IndexOutcome.Action.PENDING, 0,
            0, 0, e.getValue().size(), "registering it again after the commit failed ("
            + failure + "); the view's next commit tries again")));
      } else if (byOthers.contains(e.getKey())) {
        // That commit (another refresh's, or a maintenance's) brings the index up to date:
        // updating it here too would add a second delta segment for the same fragments.
        done.add(carry.log(IndexUpdate.skipped(table, allocator, e.getKey(), vector,
            "another commit of the view registered it")));
      } else {
        ours.put(e.getKey(), e.getValue());
      }
    }
    return new Registered(version, ours, done);
  }

  /**
   * Registers the carried segments ({@code names}) on {@code version}: one CreateIndex for all,
   * or, if lance-core refuses it, one per index, so that one index it refuses does not keep the
   * others unlisted. Returns, by index name, why its segments are not registered; the segments
   * of an index refused on its own are taken out of the record, so no later commit owes them
   * again and fails the same way.
   */
  private Map<String, String> register(LanceLocation table, BufferAllocator allocator,
      long version, Map<String, List<Index>> names, Set<String> byOthers) {
    Attempt all = registerOnce(table, allocator, version, carry.carried());
    if (all.failure() == null) {
      if (all.byOthers()) {
        byOthers.addAll(names.keySet());
      }
      return Map.of();
    }
    Map<String, String> failed = new TreeMap<>();
    Set<UUID> refused = new HashSet<>();
    long at = IndexCarry.latestVersion(table, allocator, version);
    for (Map.Entry<String, List<Index>> e : names.entrySet()) {
      Attempt one = registerOnce(table, allocator, at, e.getValue());
      if (one.failure() == null) {
        if (one.byOthers()) {
          byOthers.add(e.getKey());
        }
        at = IndexCarry.latestVersion(table, allocator, at);
      } else {
        failed.put(e.getKey(), one.failure());
        e.getValue().forEach(i -> refused.add(i.uuid()));
      }
    }
    if (!refused.isEmpty()) {
      settle(table, allocator, refused);
    }
    return failed;
  }

  /**
   * {@link #registerOnce}'s answer: {@code failure} is why the segments are not registered
   * ({@code null}: they are), {@code byOthers} whether another commit registered them.
   */
  private record Attempt(String failure, boolean byOthers) {
    static final Attempt OURS = new Attempt(null, false);
  }

  /**
   * Commits the CreateIndex of {@code segs} read at {@code version}: registered by it (also
   * when its answer was lost but its transaction landed), by another commit, or not.
   */
  private static Attempt registerOnce(LanceLocation table, BufferAllocator allocator,
      long version, List<Index> segs) {
    String uuid = null;
    try (Dataset at = table.open(allocator, version);
        Transaction t = new Transaction.Builder().readVersion(version)
            .operation(CreateIndex.builder().withNewIndices(segs).build()).build()) {
      uuid = t.uuid();
      try (Dataset done = new CommitBuilder(at).execute(t)) {
        return Attempt.OURS;
      }
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      // Its answer may have been lost although it landed; or another commit (a concurrent
      // Overwrite or no-op refresh of the view, which owes the same segments) registered them.
      // Another commit may also have brought them up to date since (a merge gives a new
      // uuid), or the user created the index again: an index of each name listed means
      // nothing is left to register.
      try (Dataset latest = table.open(allocator, null)) {
        Set<String> listed = new HashSet<>();
        latest.getIndexes().forEach(i -> listed.add(i.name()));
        if (landed(latest, version, uuid)) {
          return Attempt.OURS;
        }
        if (segs.stream().allMatch(i -> listed.contains(i.name()))) {
          return new Attempt(null, true);
        }
      } catch (Exception unreadable) { // lance-core's IOException arrives undeclared
        e.addSuppressed(unreadable);
      }
      return new Attempt(message(e), false);
    }
  }

  /** Whether a version of {@code head} after {@code version} holds transaction {@code uuid}. */
  private static boolean landed(Dataset head, long version, String uuid) {
    if (uuid == null) {
      return false;
    }
    for (long v = version + 1; v <= head.version(); v++) {
      try (Dataset at = head.checkoutVersion(v)) {
        Optional<Transaction> txn = at.readTransaction();
        try {
          if (txn.map(x -> uuid.equals(x.uuid())).orElse(false)) {
            return true;
          }
        } finally {
          txn.ifPresent(Transaction::close);
        }
      }
    }
    return false;
  }

  /**
   * Takes {@code refused} out of the latest version's record of carried segments (a schema
   * metadata update, a commit of its own), so that no later commit owes them again.
   */
  private void settle(LanceLocation table, BufferAllocator allocator, Set<UUID> refused) {
    try (Dataset ds = table.open(allocator, null)) {
      IndexRecord rec = IndexRecord.in(ds);
      if (rec == null) {
        return;
      }
      List<Index> left = rec.indexes().stream().filter(i -> !refused.contains(i.uuid()))
          .toList();
      Map<String, String> update = new java.util.HashMap<>();
      update.put(IndexCarry.KEY, new IndexRecord(rec.version(), left).json());
      try (Transaction t = new Transaction.Builder().readVersion(ds.version())
              .operation(org.lance.operation.UpdateConfig.builder().schemaMetadataUpdates(
                  org.lance.operation.UpdateMap.builder().updates(update).replace(false).build())
                  .build()).build();
          Dataset done = new CommitBuilder(ds).execute(t)) {
        // recorded without them
      }
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      LOG.warn("View table '{}': the record of carried indexes could not be updated ({}); the "
          + "view's next commit tries to register them again", LanceLocation.withoutUserInfo(
          carry.location()), message(e));
    }
  }
}
