package io.lancerest.spark.mv.server;

import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import java.util.ArrayList;
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
 * manifest read each). What a table is stays remembered while its name stays listed. A table
 * dropped and created again under the same name between two listings (a plain table replaced by
 * a view) keeps what it was until the next full rescan, every {@code rescanMillis}, which reads
 * every table again.
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
    AUTO_VIEW
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
     */
    Kind kind(List<String> tableId);
  }

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
   * Lists every namespace's tables and returns the views among them that ask for auto refresh.
   * A listing that fails fails the whole discovery, so that nothing known is forgotten for it.
   */
  synchronized List<List<String>> autoRefreshViews(long now) {
    boolean rescan = !scanned || now - rescannedAt >= rescanMillis;
    Set<List<String>> listed = new LinkedHashSet<>();
    collect(List.of(), listed);
    known.keySet().retainAll(listed);
    int read = 0;
    List<List<String>> auto = new ArrayList<>();
    for (List<String> id : listed) {
      Kind k = known.get(id);
      if (k == null || rescan) {
        k = classify(id);
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
    return auto;
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
    List<String> id = new ArrayList<>(prefix);
    id.add(name);
    return List.copyOf(id);
  }

  /** The table's kind, remembered; {@code null} (read again next time) when it cannot be read. */
  private Kind classify(List<String> id) {
    try {
      Kind k = catalog.kind(id);
      known.put(id, k);
      return k;
    } catch (MaterializedViewNotFoundException gone) {
      known.remove(id); // dropped while listing
      return null;
    } catch (RuntimeException unreadable) {
      known.remove(id);
      LOG.debug("Auto refresh discovery: table {} not read ({}); read again next time",
          String.join(".", id), unreadable.toString());
      return null;
    }
  }

  /**
   * Forgets what {@code id} is, so the next discovery reads it again: auto refresh stopped
   * watching it (dropped, or no longer asking for auto refresh).
   */
  synchronized void forget(List<String> id) {
    known.remove(id);
  }
}
