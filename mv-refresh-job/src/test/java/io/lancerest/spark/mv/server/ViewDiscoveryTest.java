package io.lancerest.spark.mv.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lancerest.client.error.ErrorCode;
import io.lancerest.client.error.ErrorDetails;
import io.lancerest.client.error.ServiceUnavailableException;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What discovery reads: every listing, but a table only when its name is new, at a rescan, or
 * after auto refresh forgot it. No Spark: a catalog in memory that counts its reads.
 */
class ViewDiscoveryTest {
  private static final long RESCAN = 3_600_000;

  /** Namespaces {@code a} (child {@code a.b}) and their tables, each with its kind. */
  static class Catalog implements ViewDiscovery.Catalog {
    final Map<List<String>, ViewDiscovery.Kind> tables = new LinkedHashMap<>();
    final List<List<String>> reads = new ArrayList<>();
    int lists;
    RuntimeException listingFails;

    @Override
    public List<String> childNamespaces(List<String> ns) {
      lists++;
      if (listingFails != null) {
        throw listingFails;
      }
      return ns.isEmpty() ? List.of("a") : ns.equals(List.of("a")) ? List.of("b") : List.of();
    }

    @Override
    public List<String> tables(List<String> ns) {
      lists++;
      return tables.keySet().stream().filter(t -> t.subList(0, t.size() - 1).equals(ns))
          .map(t -> t.get(t.size() - 1)).toList();
    }

    @Override
    public ViewDiscovery.Kind kind(List<String> id) {
      reads.add(id);
      ViewDiscovery.Kind k = tables.get(id);
      if (k == null) {
        throw new MaterializedViewNotFoundException("gone");
      }
      return k;
    }
  }

  /** The views a discovery at {@code now} finds asking for auto refresh, in listing order. */
  static List<List<String>> auto(ViewDiscovery d, long now) {
    return List.copyOf(d.discover(now).autoRefresh());
  }

  static ServiceUnavailableException unavailable() {
    return new ServiceUnavailableException(new ErrorDetails("service unavailable", null,
        ErrorCode.SERVICE_UNAVAILABLE, 503, null, null, null, null));
  }

  @Test
  void anIdleDiscoveryListsOnlyAndANewNameIsReadOnce() {
    Catalog c = new Catalog();
    for (int i = 0; i < 200; i++) {
      c.tables.put(List.of("a", "t" + i), ViewDiscovery.Kind.PLAIN);
    }
    c.tables.put(List.of("a", "b", "auto"), ViewDiscovery.Kind.AUTO_VIEW);
    c.tables.put(List.of("a", "b", "manual"), ViewDiscovery.Kind.VIEW);
    ViewDiscovery d = new ViewDiscovery(c, RESCAN);

    assertEquals(List.of(List.of("a", "b", "auto")), auto(d, 0));
    assertEquals(202, c.reads.size(), "the first discovery reads every table once");

    c.reads.clear();
    c.lists = 0;
    assertEquals(List.of(List.of("a", "b", "auto")), auto(d, 60_000));
    assertEquals(List.of(), c.reads, "nothing changed: no table is read");
    assertEquals(5, c.lists, "root, a and a.b listed (namespaces, and tables of a and a.b)");

    c.tables.put(List.of("a", "new"), ViewDiscovery.Kind.AUTO_VIEW);
    c.tables.remove(List.of("a", "t7"));
    assertEquals(List.of(List.of("a", "new"), List.of("a", "b", "auto")),
        auto(d, 120_000));
    assertEquals(List.of(List.of("a", "new")), c.reads, "only the new name is read");
  }

  @Test
  void aNameReplacedBetweenListingsIsFoundAtTheRescanOrWhenAutoRefreshForgetsIt() {
    Catalog c = new Catalog();
    c.tables.put(List.of("a", "t"), ViewDiscovery.Kind.PLAIN);
    c.tables.put(List.of("a", "v"), ViewDiscovery.Kind.AUTO_VIEW);
    ViewDiscovery d = new ViewDiscovery(c, RESCAN);
    auto(d, 0);

    // dropped and created again as an auto-refresh view, never missing from a listing
    c.tables.put(List.of("a", "t"), ViewDiscovery.Kind.AUTO_VIEW);
    c.reads.clear();
    assertEquals(List.of(List.of("a", "v")), auto(d, RESCAN - 1));
    assertEquals(List.of(), c.reads);
    assertEquals(List.of(List.of("a", "t"), List.of("a", "v")), auto(d, RESCAN));
    assertEquals(2, c.reads.size(), "the rescan reads every table");

    // auto refresh found v no longer asking: it is read again at the next discovery
    c.tables.put(List.of("a", "v"), ViewDiscovery.Kind.VIEW);
    d.forget(List.of("a", "v"));
    c.reads.clear();
    assertEquals(List.of(List.of("a", "t")), auto(d, RESCAN + 60_000));
    assertEquals(List.of(List.of("a", "v")), c.reads);
  }

  @Test
  void aFailedListingForgetsNothingAndATableTheUpstreamDidNotDescribeIsReadAgain() {
    Catalog c = new Catalog();
    c.tables.put(List.of("a", "v"), ViewDiscovery.Kind.AUTO_VIEW);
    ViewDiscovery d = new ViewDiscovery(c, RESCAN);
    auto(d, 0);
    c.listingFails = new IllegalStateException("upstream down");
    assertThrows(IllegalStateException.class, () -> auto(d, 60_000));
    c.listingFails = null;
    c.reads.clear();
    assertEquals(List.of(List.of("a", "v")), auto(d, 120_000));
    assertEquals(List.of(), c.reads, "what was known survived the failed listing");

    Catalog flaky = new Catalog() {
      int n;

      @Override
      public ViewDiscovery.Kind kind(List<String> id) {
        reads.add(id);
        if (n++ == 0) {
          throw new IllegalStateException("describe failed", unavailable());
        }
        return ViewDiscovery.Kind.AUTO_VIEW;
      }
    };
    flaky.tables.put(List.of("a", "w"), ViewDiscovery.Kind.AUTO_VIEW);
    ViewDiscovery f = new ViewDiscovery(flaky, RESCAN);
    ViewDiscovery.Found first = f.discover(0);
    assertEquals(Set.of(), first.autoRefresh());
    assertEquals(Set.of(List.of("a", "w")), first.unanswered(), "said unanswered, so that "
        + "auto refresh does not take it for a table that stopped asking");
    assertEquals(List.of(List.of("a", "w")), auto(f, 60_000), "read again");
    assertEquals(2, flaky.reads.size());
  }

  @Test
  void aTableWhoseDataCannotBeOpenedIsReadAgainOnlyAtTheNextRescan() {
    Catalog c = new Catalog() {
      @Override
      public ViewDiscovery.Kind kind(List<String> id) {
        if (id.equals(List.of("a", "bad"))) {
          reads.add(id);
          // what lance says of a table whose storage credentials do not open it
          throw new IllegalStateException("LanceError(IO): access denied for s3://b/bad.lance");
        }
        return super.kind(id);
      }
    };
    c.tables.put(List.of("a", "bad"), ViewDiscovery.Kind.PLAIN);
    c.tables.put(List.of("a", "v"), ViewDiscovery.Kind.AUTO_VIEW);
    ViewDiscovery d = new ViewDiscovery(c, RESCAN);
    ViewDiscovery.Found first = d.discover(0);
    assertEquals(Set.of(List.of("a", "v")), first.autoRefresh());
    assertEquals(Set.of(), first.unanswered(), "the upstream answered; the data did not open");
    for (long t = 60_000; t < RESCAN; t += 60_000) {
      c.reads.clear();
      auto(d, t);
      assertEquals(List.of(), c.reads, "at " + t + " ms: the unreadable table was read again");
    }
    c.reads.clear();
    auto(d, RESCAN);
    assertEquals(List.of(List.of("a", "bad"), List.of("a", "v")), c.reads,
        "the rescan reads it again");
  }
}
