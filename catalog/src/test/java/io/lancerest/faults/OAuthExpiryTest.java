package io.lancerest.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * OAuth2 tokens that live two seconds, checked by the proxy on every request, during a long
 * sequence of catalog operations: every statement completes, because the client refreshes the
 * token ahead of expiry (and once more after a 401).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Tag("slow")
class OAuthExpiryTest {
  static final String CAT = "fo";
  static final Duration LIFETIME = Duration.ofSeconds(2);
  static final Duration RUN = FaultsFixture.LONG ? Duration.ofSeconds(60) : Duration.ofSeconds(7);
  private FaultsFixture f;
  private FaultProxy proxy;
  private OAuthEndpoint oauth;

  @BeforeAll
  void start() {
    f = FaultsFixture.get();
    proxy = FaultProxy.start(f.server.uri());
    oauth = proxy.requireOAuth("spark-job", "job-secret", LIFETIME);
    f.registerCatalog(CAT, proxy.uri(), Map.of(
        "oauth2.credential", "spark-job:job-secret",
        "oauth2.token-uri", proxy.uri() + "/oauth/token"));
  }

  @AfterAll
  void stop() {
    proxy.close();
  }

  @Test
  void aSequenceLongerThanManyTokenLifetimesCompletes() throws Exception {
    String ns = CAT + "." + FaultsFixture.unique("oa");
    f.sql("CREATE NAMESPACE " + ns);
    f.sql("CREATE TABLE " + ns + ".log (id BIGINT, step STRING)");
    long end = System.nanoTime() + RUN.toNanos();
    int step = 0;
    while (System.nanoTime() < end || step < 3) {
      String t = ns + ".s" + step;
      f.sql("CREATE TABLE " + t + " AS SELECT " + step + " AS id");
      f.sql("INSERT INTO " + ns + ".log VALUES (" + step + ", 'step')");
      assertEquals(step + 1L, f.sql("SELECT count(*) FROM " + ns + ".log").get(0).getLong(0));
      assertTrue(f.sql("SHOW TABLES IN " + ns).size() >= 2);
      f.sql("DROP TABLE " + t);
      step++;
      Thread.sleep(300); // idle time, as between the stages of a job
    }
    long seconds = RUN.toSeconds();
    assertTrue(oauth.issued() >= seconds / LIFETIME.toSeconds(),
        "tokens were refreshed: " + oauth.issued() + " issued in " + seconds + " s");
    LoadTest.report(String.format("oauth: %d steps (5 statements each) in %d s with %d s tokens:"
            + " %d tokens issued, %d requests refused with 401 (%d of them expired tokens), "
            + "all statements completed", step, seconds, LIFETIME.toSeconds(), oauth.issued(),
        oauth.refused(), oauth.refusedExpired()));
  }
}
