package io.lancerest.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.CreateNamespaceRequest;
import io.lancerest.client.model.DescribeTableRequest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Load through the catalog: listing many tables (complete, through paging) and many writers on
 * one table (every committed row exactly once). Sizes grow with {@code -Dlancerest.longTests}.
 * Measured times are printed and appended to {@code target/faults-timings.txt}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Tag("slow")
class LoadTest {
  static final String CAT = "fl";
  static final int NAMESPACES = 50;
  static final int TABLES = FaultsFixture.LONG ? 20_000 : 2_000;
  /** Names per page: small, so every namespace's listing takes several pages. */
  static final int PAGE = 7;
  static final int WRITERS = 8;
  static final int INSERTS_PER_WRITER = FaultsFixture.LONG ? 25 : 2;
  static final int ROWS_PER_INSERT = 50;
  private FaultsFixture f;
  private FaultProxy proxy;
  private LanceRestClient direct;

  @BeforeAll
  void start() {
    f = FaultsFixture.get();
    proxy = FaultProxy.start(f.server.uri());
    proxy.pageLists(PAGE);
    direct = f.directClient();
    f.registerCatalog(CAT, proxy.uri(), Map.of());
  }

  @AfterAll
  void stop() {
    proxy.close();
    direct.close();
  }

  static void report(String line) {
    System.out.println("TIMING " + line);
    try {
      Files.writeString(Path.of("target", "faults-timings.txt"), line + System.lineSeparator(),
          StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    } catch (IOException ignored) {
      // the printed line is enough
    }
  }

  @Test
  void listingEveryTableOfManyNamespacesIsCompleteThroughPaging() {
    String prefix = FaultsFixture.unique("ld");
    long t0 = System.nanoTime();
    List<String> namespaces = new ArrayList<>();
    for (int i = 0; i < NAMESPACES; i++) {
      namespaces.add(prefix + "_" + i);
      direct.createNamespace(new CreateNamespaceRequest().id(List.of(prefix + "_" + i))
          .properties(Map.of()));
    }
    long t1 = System.nanoTime();
    List<List<String>> ids = new ArrayList<>();
    Set<String> expected = new HashSet<>();
    for (int t = 0; t < TABLES; t++) {
      String ns = namespaces.get(t % NAMESPACES);
      ids.add(List.of(ns, "t" + t));
      expected.add(ns + "." + "t" + t);
    }
    ManifestBulk.declareTables(f.server.rootDir(), ids, "$");
    long t2 = System.nanoTime();
    // The server itself sees them as declared tables.
    assertEquals(TABLES / NAMESPACES, direct.listAllTables(List.of(namespaces.get(3))).toList()
        .size());
    assertTrue(direct.describeTable(new DescribeTableRequest().id(ids.get(17))).getLocation()
        .endsWith(ids.get(17).get(0) + "$t17"));

    long s0 = System.nanoTime();
    int direct50 = 0;
    for (String ns : namespaces) {
      direct50 += direct.listAllTables(List.of(ns)).toList().size();
    }
    long s1 = System.nanoTime();
    assertEquals(TABLES, direct50);
    proxy.reset();
    long t3 = System.nanoTime();
    Set<String> listed = new HashSet<>();
    for (String ns : namespaces) {
      for (Row r : f.sql("SHOW TABLES IN " + CAT + "." + ns)) {
        assertTrue(listed.add(r.getString(0) + "." + r.getString(1)), "listed twice: " + r);
      }
    }
    long t4 = System.nanoTime();
    assertEquals(expected, listed);
    // The catalog's own listTables, without Spark SQL's per-statement cost around it.
    org.apache.spark.sql.connector.catalog.TableCatalog catalog =
        (org.apache.spark.sql.connector.catalog.TableCatalog) f.spark.sessionState()
            .catalogManager().catalog(CAT);
    long c0 = System.nanoTime();
    int viaCatalog = 0;
    for (String ns : namespaces) {
      try {
        viaCatalog += catalog.listTables(new String[] {ns}).length;
      } catch (org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException e) {
        throw new AssertionError(e);
      }
    }
    long c1 = System.nanoTime();
    assertEquals(TABLES, viaCatalog);
    int perNamespace = TABLES / NAMESPACES;
    assertEquals(2 * NAMESPACES * ((perNamespace + PAGE - 1) / PAGE),
        proxy.seen("namespace/table/list"),
        proxy.upstreamCounts().toString());
    Set<String> shownNamespaces = new HashSet<>();
    f.sql("SHOW NAMESPACES IN " + CAT).forEach(r -> shownNamespaces.add(r.getString(0)));
    assertTrue(shownNamespaces.containsAll(namespaces), "all namespaces, through paging");
    report(String.format("listing: %d tables in %d namespaces, pages of %d: SHOW TABLES of all "
            + "namespaces %d ms, TableCatalog.listTables of all namespaces %d ms (%d list "
            + "requests in all, %d reaching the server); the server's own "
            + "ListTables of all namespaces, unpaged, direct: %d ms; setup: %d CreateNamespace "
            + "%d ms, bulk declaration %d ms", TABLES, NAMESPACES, PAGE, (t4 - t3) / 1_000_000,
        (c1 - c0) / 1_000_000, proxy.seen("namespace/table/list"),
        proxy.upstream("namespace/table/list"),
        (s1 - s0) / 1_000_000, NAMESPACES, (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000));
  }

  @Test
  void concurrentWritersToOneTableKeepEveryCommittedRowOnce() throws Exception {
    String ns = FaultsFixture.unique("lw");
    String t = CAT + "." + ns + ".w";
    f.sql("CREATE NAMESPACE " + CAT + "." + ns);
    f.sql("CREATE TABLE " + t + " (id BIGINT, writer INT)");
    Map<Long, Boolean> committed = new ConcurrentHashMap<>();
    Map<Long, String> failed = new ConcurrentHashMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
    long t0 = System.nanoTime();
    List<Future<?>> futures = new ArrayList<>();
    for (int w = 0; w < WRITERS; w++) {
      int writer = w;
      futures.add(pool.submit(() -> {
        for (int k = 0; k < INSERTS_PER_WRITER; k++) {
          long base = (writer * 1000L + k) * ROWS_PER_INSERT;
          try {
            f.sql("INSERT INTO " + t + " SELECT id + " + base + ", " + writer + " FROM range("
                + ROWS_PER_INSERT + ")");
            committed.put(base, true);
          } catch (RuntimeException e) {
            failed.put(base, String.valueOf(e.getMessage()));
          }
        }
      }));
    }
    for (Future<?> fu : futures) {
      fu.get();
    }
    pool.shutdown();
    long t1 = System.nanoTime();
    List<Row> all = f.sql("SELECT id FROM " + t);
    Set<Long> ids = new HashSet<>();
    all.forEach(r -> assertTrue(ids.add(r.getLong(0)), "duplicate row " + r));
    for (long base : committed.keySet()) {
      for (long i = 0; i < ROWS_PER_INSERT; i++) {
        assertTrue(ids.contains(base + i), "committed row " + (base + i) + " missing");
      }
    }
    assertEquals((long) committed.size() * ROWS_PER_INSERT, ids.size(),
        "rows of failed statements must not be there: " + failed);
    report(String.format("writers: %d threads x %d INSERTs of %d rows into one table: %d "
            + "committed, %d failed, %d rows, %d ms%s", WRITERS, INSERTS_PER_WRITER,
        ROWS_PER_INSERT, committed.size(), failed.size(), ids.size(), (t1 - t0) / 1_000_000,
        failed.isEmpty() ? "" : "; first failure: " + failed.values().iterator().next()));
    assertEquals(WRITERS * INSERTS_PER_WRITER, committed.size(),
        "lance-spark appends do not conflict with each other: " + failed);
  }
}
