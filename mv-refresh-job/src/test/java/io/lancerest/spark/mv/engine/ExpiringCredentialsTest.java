package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.testing.ExpiringKeyS3Proxy;
import io.lancerest.client.testing.VendingNamespace;
import io.lancerest.spark.mv.TestSpark;
import io.lancerest.spark.mv.function.BatchUdtf;
import io.lancerest.spark.mv.function.Chunker;
import io.lancerest.spark.mv.function.UdtfContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Vended S3 credentials that expire in the middle of statements, behind a server that requires
 * a token: a {@link VendingNamespace} (bearer token; 4-second keys) in front of lance-core's dir
 * server on S3, and an {@link ExpiringKeyS3Proxy} that refuses each key after its expiry. The
 * catalog has no {@code storage.*} credentials of its own. A long SELECT, a chunker refresh and a
 * UDTF refresh each last several key lifetimes and must complete with the right rows: Lance
 * renews the keys on the driver and in tasks through the driver's credential relay.
 */
@Tag("slow")
public class ExpiringCredentialsTest {
  static final String TOKEN = "long-lived-catalog-token-4f1c9e";
  static final Duration LIFETIME = Duration.ofSeconds(4);

  static VendedS3 env;
  static ExpiringKeyS3Proxy keys;
  static VendingNamespace vending;
  static EngineFixture f;

  @BeforeAll
  static void start() {
    env = VendedS3.start("expiring", TOKEN, TOKEN, LIFETIME, TestSpark.MASTER, Map.of());
    keys = env.keys;
    vending = env.vending;
    f = env.f;
  }

  @AfterAll
  static void stop() {
    if (env != null) {
      env.close();
    }
  }

  /** The words of {@code body}, 25 ms per document: a refresh of 400 lasts 10 s. */
  public static class SlowWords implements Chunker {
    private final long msPerDocument;

    public SlowWords() {
      this(25);
    }

    protected SlowWords(long msPerDocument) {
      this.msPerDocument = msPerDocument;
    }

    @Override
    public StructType outputSchema(Map<String, String> options, StructType inputSchema) {
      return new StructType().add("word", DataTypes.StringType);
    }

    @Override
    public Iterator<Row> chunk(Row input) {
      sleep(msPerDocument);
      List<Row> out = new ArrayList<>();
      for (String w : input.getString(0).split(" ")) {
        out.add(RowFactory.create(w));
      }
      return out.iterator();
    }
  }

  /** The row count of each partition, 2.5 s per partition. */
  public static class SlowCount implements BatchUdtf {
    private final long msPerPartition;

    public SlowCount() {
      this(2500);
    }

    protected SlowCount(long msPerPartition) {
      this.msPerPartition = msPerPartition;
    }

    @Override
    public StructType outputSchema(StructType input, Map<String, String> options) {
      return new StructType().add("grp", DataTypes.StringType).add("n", DataTypes.LongType,
          false);
    }

    @Override
    public Iterator<Row> process(UdtfContext ctx, Iterator<Row> rows) {
      long n = 0;
      while (rows.hasNext()) {
        rows.next();
        n++;
      }
      sleep(msPerPartition);
      return List.of(RowFactory.create(ctx.partitionKey(), n)).iterator();
    }
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static String docs(String ns, int n) {
    String t = "lance." + ns + ".docs";
    f.sql("CREATE TABLE " + t + " (id BIGINT, body STRING, grp STRING)");
    // several fragments, so that tasks open them at different times
    for (int part = 0; part < 4; part++) {
      f.sql("INSERT INTO " + t + " SELECT id, concat('w', id, ' x', id % 7), concat('g', id % 4)"
          + " FROM range(" + (part * n / 4) + ", " + ((part + 1) * n / 4) + ", 1, 1)");
    }
    return t;
  }

  @Test
  void aLongSelectAChunkerRefreshAndAUdtfRefreshOutliveSeveralKeys() {
    String ns = f.namespace("exp");
    String t = docs(ns, 400);
    long mintedBefore = keys.minted();
    long expiredBefore = keys.expired();

    // A SELECT of about 10 s: 25 ms per row in one task.
    f.spark.udf().register("slow_len", (org.apache.spark.sql.api.java.UDF1<String, Integer>)
        s -> {
          sleep(25);
          return s.length();
        }, DataTypes.IntegerType);
    long t0 = System.nanoTime();
    Row r = f.spark.sql("SELECT count(*), sum(slow_len(body)) FROM (SELECT /*+ COALESCE(1) */ "
        + "body FROM " + t + ")").first();
    long selectMs = (System.nanoTime() - t0) / 1_000_000;
    assertEquals(400L, r.getLong(0));
    long expectLen = f.spark.sql("SELECT sum(length(body)) FROM " + t).first().getLong(0);
    assertEquals(expectLen, r.getLong(1));
    assertTrue(selectMs > 2 * LIFETIME.toMillis(), "the SELECT lasted " + selectMs + " ms");

    // A chunker refresh of about 10 s, then an incremental one.
    String c = "lance." + ns + ".words";
    f.sql("CREATE MATERIALIZED VIEW " + c + " USING CHUNKER '" + SlowWords.class.getName()
        + "' OPTIONS (input_columns = 'body') AS SELECT id, body FROM " + t);
    assertEquals(800L, f.spark.sql("SELECT count(*) FROM " + c).first().getLong(0));
    f.sql("INSERT INTO " + t + " VALUES (1000, 'late one', 'g0')");
    f.sql("REFRESH MATERIALIZED VIEW " + c);
    assertEquals(802L, f.spark.sql("SELECT count(*) FROM " + c).first().getLong(0));

    // A UDTF refresh of 4 partitions, 2.5 s each, with resume checkpoints between them.
    String u = "lance." + ns + ".counts";
    f.sql("CREATE MATERIALIZED VIEW " + u + " USING UDTF '" + SlowCount.class.getName()
        + "' PARTITION BY grp AS SELECT grp, id FROM " + t);
    assertEquals(List.of("g0|101", "g1|100", "g2|100", "g3|100"),
        f.rows("SELECT grp, n FROM " + u + " ORDER BY grp"));

    assertTrue(keys.minted() - mintedBefore > 3, "keys were renewed: " + keys);
    io.lancerest.spark.catalog.CredentialRelay relay =
        ((io.lancerest.spark.catalog.LanceRestCatalog) f.spark.sessionState().catalogManager()
            .catalog(EngineFixture.CATALOG)).shared(
                io.lancerest.spark.catalog.CredentialRelay.class, () -> {
                  throw new AssertionError("the catalog started no credential relay");
                });
    assertTrue(relay.served() > 0, "renewals went through the driver's relay");
    assertEquals(0, relay.refused(), "no request was refused by the relay");
    assertTrue(keys.accepted() > 0, keys.toString());
    // Renewal comes before expiry: no request went out with an expired key.
    assertEquals(expiredBefore, keys.expired(), keys.toString());
    // Nothing asked the server without the token: executors asked the driver's relay.
    assertEquals(0, vending.unauthorized(), vending.toString());
    System.out.println("expiring credentials: " + keys + "; " + vending);
  }

  @Test
  void withoutTheRelayAnExpiredKeyFailsTheReadNamingTheTableAndTheExpiry() {
    String ns = f.namespace("norelay");
    String t = docs(ns, 200);
    org.apache.spark.sql.SparkSession s = f.sessionWith();
    s.conf().set("spark.sql.catalog." + EngineFixture.CATALOG + ".credential-relay.enabled",
        "false");
    s.udf().register("slow_len2", (org.apache.spark.sql.api.java.UDF1<String, Integer>) b -> {
      sleep(40);
      return b.length();
    }, DataTypes.IntegerType);
    Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class,
        () -> s.sql("SELECT sum(slow_len2(body)) FROM (SELECT /*+ COALESCE(1) */ body FROM "
            + t + ")").collect());
    String m = String.valueOf(e.getMessage());
    assertTrue(m.contains("Reading table " + ns + ".docs failed: the object store refused its "
        + "storage credentials as expired (the server vended them valid until "), m);
    assertTrue(m.contains("ExpiredToken"), m);
    assertTrue(!m.contains("vended-secret-"), "no vended secret in the message");
  }
}
