package io.lancerest.spark.mv.server;

import io.lancerest.client.error.LanceRestException;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.refresh.JobTracker;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the views that ask for auto refresh among the tables of every namespace, at a cost that
 * follows change: each discovery lists the namespaces and their tables (one call a namespace and
 * page), and reads only the tables whose name it has not seen yet (one DescribeTable and one
 * manifest read each). What a table is stays remembered while its name stays listed, a table
 * whose data cannot be opened included. A table dropped and created again under the same name
 * between two listings (a plain table replaced by a view) keeps what it was until the next full
 * rescan, every {@code rescanMillis}, which reads every table again.
 */
final class ViewDiscovery {
  private static final Logger LOG = LoggerFactory.getLogger(ViewDiscovery.class);

  /** What a table is to auto refresh. */
  enum Kind {
    /** Not a materialized view (or not one this engine can read). */
    PLAIN,
    /** A materialized view without {@code auto_refresh}. */
    VIEW,
    /** A materialized view with {@code auto_refresh = true}. */
    AUTO_VIEW,
    /** A table whose data could not be opened (storage credentials, not a Lance dataset). */
    UNREADABLE
  }

  /** What discovery reads of the upstream. */
  interface Catalog {
    /** The names of the namespaces directly under {@code namespace} (all pages). */
    List<String> childNamespaces(List<String> namespace);

    /** The names of the tables directly in {@code namespace} (all pages). */
    List<String> tables(List<String> namespace);

    /**
     * What the table is: one read of it.
     *
     * @throws MaterializedViewNotFoundException when it is gone
     * @throws LanceRestException when the upstream did not answer (read again next time); any
     *     other failure says the table's data cannot be read (not read again before the next
     *     full rescan)
     */
    Kind kind(List<String> tableId);
  }

  /**
   * What one discovery found.
   *
   * @param autoRefresh the views that ask for auto refresh, in listing order
   * @param rescan whether every table was read: then a table not in {@code autoRefresh} nor in
   *     {@code unanswered} is known not to ask for it
   * @param unanswered the tables the upstream did not describe this time
   */
  record Found(Set<List<String>> autoRefresh, boolean rescan, Set<List<String>> unanswered) {}

  private final Catalog catalog;
  private final long rescanMillis;
  private final Map<List<String>, Kind> known = new HashMap<>();
  private long rescannedAt;
  private boolean scanned;

  ViewDiscovery(Catalog catalog, long rescanMillis) {
    this.catalog = catalog;
    this.rescanMillis = rescanMillis;
  }

  /**
   * Lists every namespace's tables and finds the views among them that ask for auto refresh.
   * A listing that fails fails the whole discovery, so that nothing known is forgotten for it.
   */
  synchronized Found discover(long now) {
    boolean rescan = !scanned || now - rescannedAt >= rescanMillis;
    Set<List<String>> listed = new LinkedHashSet<>();
    collect(List.of(), listed);
    known.keySet().retainAll(listed);
    int read = 0;
    Set<List<String>> auto = new LinkedHashSet<>();
    Set<List<String>> unanswered = new LinkedHashSet<>();
    for (List<String> id : listed) {
      Kind k = known.get(id);
      if (k == null || rescan) {
        k = classify(id, unanswered);
        read++;
      }
      if (k == Kind.AUTO_VIEW) {
        auto.add(id);
      }
    }
    if (rescan) {
      scanned = true;
      rescannedAt = now;
    }
    LOG.debug("Auto refresh discovery: {} tables listed, {} read{}, {} ask for auto refresh",
        listed.size(), read, rescan ? " (full rescan)" : "", auto.size());
    return new Found(auto, rescan, unanswered);
  }

  private void collect(List<String> namespace, Set<List<String>> out) {
    for (String child : catalog.childNamespaces(namespace)) {
      List<String> ns = append(namespace, child);
      for (String table : catalog.tables(ns)) {
        out.add(append(ns, table));
      }
      collect(ns, out);
    }
  }

  private static List<String> append(List<String> prefix, String name) {
    String[] id = prefix.toArray(new String[prefix.size() + 1]);
    id[prefix.size()] = name;
    return List.of(id);
  }

  /**
   * The table's kind, remembered; {@code null} when it is gone, or when the upstream did not
   * answer (then it joins {@code unanswered} and is read again next time).
   */
  private Kind classify(List<String> id, Set<List<String>> unanswered) {
    try {
      Kind k = catalog.kind(id);
      known.put(id, k);
      return k;
    } catch (MaterializedViewNotFoundException | NotFoundException gone) {
      known.remove(id); // dropped while listing
      return null;
    } catch (RuntimeException e) {
      if (fromUpstream(e)) {
        known.remove(id);
        unanswered.add(id);
        LOG.debug("Auto refresh discovery: table {} not described ({}); read again next time",
            String.join(".", id), e.toString());
        return null;
      }
      // Its data cannot be opened: reading it at every listing would cost an object store
      // round trip each minute for nothing, so it waits for the next full rescan.
      known.put(id, Kind.UNREADABLE);
      LOG.info("Auto refresh discovery: table {} cannot be read ({}); read again at the next "
          + "full rescan", String.join(".", id), JobTracker.redact(e.toString()));
      return Kind.UNREADABLE;
    }
  }

  private static boolean fromUpstream(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof LanceRestException) {
        return true;
      }
      if (c.getCause() == c) {
        break;
      }
    }
    return false;
  }

  /**
   * Forgets what {@code id} is, so the next discovery reads it again: auto refresh stopped
   * watching it (dropped, or no longer asking for auto refresh).
   */
  synchronized void forget(List<String> id) {
    known.remove(id);
  }
}
