package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.testing.S3ProxyFixture;
import io.lancerest.spark.mv.layout.ErrorsTable;
import io.lancerest.spark.mv.udtf.PartitionCheckpoints;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Row;

/**
 * What the object-store tests run on S3 (s3proxy, {@link S3ProxyFixture}) and on a local folder
 * alike: {@link #tables} (CTAS, MERGE, time travel, DROP … PURGE) and {@link #scenario} (the
 * three view kinds created and refreshed after INSERT / UPDATE / DELETE and with {@code force =
 * true}), compared by {@link ObjectStoreClusterTest} on a cluster and by {@link
 * ObjectStoreFaultsTest} through faults; {@link #assertWritesOnlyUnderTheirLocations}; and
 * {@link #errorsTablesAndUdtfCheckpointsLiveOnS3}.
 *
 * <p>lance-core 4.0.0's dir server does not hand its {@code storage.*} options to clients, so the
 * catalog gets the same ones as {@code storage.*} catalog options.
 */
final class ObjectStoreScenarios {
  private ObjectStoreScenarios() {}

  private static final String SKIP_ILLEGAL_STATE = "'{\"format\":\"lancerest.error_handling.v1\","
      + "\"rules\":[{\"match\":\"IllegalStateException\",\"action\":\"skip\"}]}'";

  static String location(EngineFixture f, String ns, String view) {
    return CatalogBinding.of(f.spark, EngineFixture.CATALOG).locate(List.of(ns, view), "view")
        .location();
  }

  static String keyPrefix(String location) {
    String p = "s3://" + S3ProxyFixture.BUCKET + "/";
    assertTrue(location.startsWith(p), "an S3 location: " + location);
    String k = location.substring(p.length());
    return k.endsWith("/") ? k : k + "/";
  }

  /**
   * CTAS, MERGE, time travel and DROP … PURGE; the rows seen after each, by step. A DROP that
   * fails under faults while the table is still listed is given again (at most 3 times); one
   * that failed after the table was deregistered is recorded: the dir server deletes the table's
   * objects with one DeleteObjects POST, which lance-core's object_store does not retry after a
   * connection error, and answers such a failure with HTTP 400. Without {@code dropErrors}
   * (no faults) the first failure is thrown; {@code s3} is where {@code f}'s objects are, or
   * {@code null} for a local folder.
   */
  static Map<String, List<String>> tables(EngineFixture f, S3ProxyFixture s3,
      List<String> dropErrors) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    String ns = f.namespace("oft");
    String t = "lance." + ns + ".t";
    f.sql("CREATE TABLE " + t + " AS SELECT id, CAST(id * 10 AS BIGINT) AS v FROM range(0, 300)");
    out.put("ctas", f.rows("SELECT count(*), sum(v) FROM " + t));
    f.sql("CREATE OR REPLACE TEMPORARY VIEW oft_changes AS SELECT id, CAST(-id AS BIGINT) AS v "
        + "FROM range(250, 350)");
    f.sql("MERGE INTO " + t + " x USING oft_changes c ON x.id = c.id WHEN MATCHED THEN UPDATE "
        + "SET v = c.v WHEN NOT MATCHED THEN INSERT (id, v) VALUES (c.id, c.v)");
    out.put("merge", f.rows("SELECT count(*), sum(v), count(DISTINCT id) FROM " + t));
    out.put("time travel", f.rows("SELECT count(*), sum(v) FROM " + t + " VERSION AS OF 1"));
    String location = s3 == null ? null : loadLocation(
        (org.apache.spark.sql.connector.catalog.TableCatalog) f.spark.sessionState()
            .catalogManager().catalog("lance"), ns, "t");
    for (int attempt = 1; ; attempt++) {
      try {
        f.sql("DROP TABLE " + t + " PURGE");
        break;
      } catch (RuntimeException e) {
        if (dropErrors == null || attempt == 3) {
          throw e;
        }
        boolean listed = f.rows("SHOW TABLES IN lance." + ns).stream()
            .anyMatch(r -> r.contains("|t|"));
        dropErrors.add(e.getMessage() + " [table still listed: " + listed + "; objects left: "
            + (location == null ? "?" : s3.keys(keyPrefix(location)).size())
            + "]");
        if (!listed) {
          Exception again = assertThrows(Exception.class,
              () -> f.sql("DROP TABLE " + t + " PURGE"));
          assertTrue(String.valueOf(again.getMessage()).contains("cannot be found"),
              "a second DROP of the deregistered table: " + again);
          break;
        }
      }
    }
    out.put("purged", f.rows("SHOW TABLES IN lance." + ns));
    if (location != null && (dropErrors == null || dropErrors.isEmpty())) {
      assertEquals(List.of(), s3.keys(keyPrefix(location)),
          "PURGE removed every object of " + t);
    }
    return out;
  }

  /** Each view's rows after each step, by "step view". */
  static Map<String, List<String>> scenario(EngineFixture f, Map<String, String> statuses) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    String ns = f.namespace("osv");
    String docs = "lance." + ns + ".docs";
    f.sql("CREATE TABLE " + docs + " (id BIGINT, body STRING, grp STRING)");
    f.sql("INSERT INTO " + docs + " VALUES (1, 'a b', 'x'), (2, 'c', 'y'), (3, 'd e f', 'x'), "
        + "(4, 'g h i j', 'y'), (5, 'k', 'z')");
    Map<String, String> views = new LinkedHashMap<>();
    views.put("q", "AS SELECT id, body, grp FROM " + docs + " WHERE id > 1");
    views.put("c", "USING CHUNKER 'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS "
        + "(input_columns = 'body', separator = ' ') AS SELECT id, body FROM " + docs);
    views.put("u", "USING UDTF 'io.lancerest.spark.mv.udtf.TopKUdtf' PARTITION BY grp OPTIONS "
        + "(k = 2, order_by = 'id') AS SELECT grp, id, body FROM " + docs);
    String[] cols = {"id, body, grp", "id, chunk", "grp, id, body, rank"};
    List<String> names = new ArrayList<>(views.keySet());
    for (String v : names) {
      Row r = f.sql("CREATE MATERIALIZED VIEW lance." + ns + "." + v + " " + views.get(v)).get(0);
      statuses.put("create " + v, r.getString(1));
    }
    List<String> steps = List.of("create",
        "INSERT INTO " + docs + " VALUES (6, 'l m', 'x'), (7, 'n', 'z')",
        "UPDATE " + docs + " SET body = 'o p q' WHERE id = 2",
        "DELETE FROM " + docs + " WHERE id IN (3, 5)",
        "force");
    for (String step : steps) {
      if (!step.equals("create") && !step.equals("force")) {
        f.sql(step);
      }
      for (int i = 0; i < names.size(); i++) {
        String v = "lance." + ns + "." + names.get(i);
        if (!step.equals("create")) {
          Row r = f.sql("REFRESH MATERIALIZED VIEW " + v
              + (step.equals("force") ? " WITH (force = true)" : "")).get(0);
          statuses.put(step.split(" ")[0] + " " + names.get(i), r.getString(1));
        }
        out.put(step.split(" ")[0] + " " + names.get(i),
            f.rows("SELECT " + cols[i] + " FROM " + v));
      }
    }
    out.put("ns", List.of(ns)); // for the caller; not compared
    return out;
  }

  /**
   * Every object of the bucket is under {@code root}; what {@link #scenario} wrote in namespace
   * {@code ns} (the objects not in {@code before}) is under the source table's location, the
   * views' own locations (with their errors tables), the job log or the dir server's own catalog
   * table.
   */
  static void assertWritesOnlyUnderTheirLocations(EngineFixture onS3, S3ProxyFixture s3,
      String root, String ns, Set<String> before) {
    List<String> all = s3.keys("");
    assertEquals(List.of(), all.stream().filter(k -> !k.startsWith(root + "/")).toList(),
        "objects outside " + s3.uri(root));
    List<String> allowed = new ArrayList<>();
    allowed.add(keyPrefix(onS3.spark.sessionState().catalogManager().catalog("lance") instanceof
        org.apache.spark.sql.connector.catalog.TableCatalog tc ? loadLocation(tc, ns, "docs")
        : "?"));
    for (String v : List.of("q", "c", "u")) {
      String loc = location(onS3, ns, v);
      allowed.add(keyPrefix(loc));
      allowed.add(keyPrefix(ErrorsTable.nextTo(loc)));
      assertFalse(s3.keys(keyPrefix(loc)).isEmpty(), "view " + v + " has objects at " + loc);
    }
    // The dir server's own catalog of namespaces and tables (a Lance table it commits to on
    // every declare and drop).
    allowed.add(root + "/__manifest/");
    List<String> stray = new ArrayList<>();
    for (String k : all) {
      if (!before.contains(k) && allowed.stream().noneMatch(k::startsWith)
          && !k.contains("mv_jobs")) {
        stray.add(k);
      }
    }
    assertEquals(List.of(), stray, "objects written outside the tables' and views' locations");
  }

  static String loadLocation(org.apache.spark.sql.connector.catalog.TableCatalog c,
      String ns, String table) {
    try {
      return c.loadTable(org.apache.spark.sql.connector.catalog.Identifier.of(new String[] {ns},
          table)).properties().get("location");
    } catch (Exception e) {
      throw new AssertionError("cannot load " + ns + "." + table, e);
    }
  }

  /**
   * A chunker view's {@code <view>__errors} table and a failed UDTF refresh's resume checkpoints
   * are on S3 next to the view, and DROP removes both.
   */
  static void errorsTablesAndUdtfCheckpointsLiveOnS3(EngineFixture f, S3ProxyFixture s3) {
    String ns = f.namespace("ose");
    String docs = "lance." + ns + ".docs";
    f.sql("CREATE TABLE " + docs + " (id BIGINT, body STRING, grp STRING)");
    f.sql("INSERT INTO " + docs + " VALUES (1, 'fine words', 'ok'), (2, 'BOOM here', 'bad'), "
        + "(3, 'more', 'ok')");
    String c = "lance." + ns + ".c";
    Row cr = f.sql("CREATE MATERIALIZED VIEW " + c + " USING CHUNKER "
        + "'io.lancerest.spark.mv.chunker.TestChunkers$Failing' OPTIONS (input_columns = "
        + "'body', output_schema = 'chunk STRING NOT NULL, char_offset INT NOT NULL', "
        + "error_handling = " + SKIP_ILLEGAL_STATE + ") AS SELECT id, body FROM "
        + docs).get(0);
    assertEquals(List.of("PARTIAL", 1L), List.of(cr.getString(1), cr.getLong(6)), cr.toString());
    String cLoc = location(f, ns, "c");
    String errors = ErrorsTable.nextTo(cLoc);
    assertTrue(errors.startsWith("s3://"), errors);
    assertTrue(s3.keys(keyPrefix(errors)).stream().anyMatch(k -> k.contains("_versions/")),
        "the errors table is committed on S3 at " + errors);
    assertEquals(1, io.lancerest.spark.mv.fragments.LanceReads.load(f.spark, errors,
        s3.storageOptions(), null).count(), "one skipped row recorded");

    // A UDTF refresh that fails in one partition keeps the others' results as checkpoints.
    String items = "lance." + ns + ".items";
    f.sql("CREATE TABLE " + items + " (id BIGINT, grp STRING)");
    f.sql("INSERT INTO " + items + " VALUES (1, 'ok'), (2, 'ok')");
    String u = "lance." + ns + ".u";
    f.sql("CREATE MATERIALIZED VIEW " + u + " USING UDTF '"
        + ClientFunctionViewTest.FailOnBad.class.getName() + "' PARTITION BY grp AS SELECT grp, id"
        + " FROM " + items);
    String uLoc = location(f, ns, "u");
    String ckpt = keyPrefix(PartitionCheckpoints.location(uLoc));
    assertEquals(List.of(), s3.keys(ckpt), "a committed refresh leaves no checkpoints");
    f.sql("INSERT INTO " + items + " VALUES (3, 'bad')");
    assertThrows(Exception.class, () -> f.sql("REFRESH MATERIALIZED VIEW " + u));
    assertTrue(s3.keys(ckpt).size() > 0, "checkpoints on S3 under " + ckpt);

    f.sql("DROP MATERIALIZED VIEW " + c);
    f.sql("DROP MATERIALIZED VIEW " + u);
    assertEquals(List.of(), s3.keys(keyPrefix(errors)), "DROP removed the errors table");
    assertEquals(List.of(), s3.keys(ckpt), "DROP removed the checkpoints");
    f.sql("DROP NAMESPACE lance." + ns + " CASCADE");
  }
}
