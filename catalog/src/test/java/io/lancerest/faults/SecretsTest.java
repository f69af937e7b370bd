package io.lancerest.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lancerest.client.testing.LogCapture;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.logging.log4j.Level;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.EventLoggingListener;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import scala.Option;

/**
 * A bearer token, an OAuth2 client secret, an API key and vended storage credentials (injected
 * by the proxy into every DescribeTable answer) are configured, a realistic session runs, and
 * none of them may show up in logs captured at DEBUG, exception messages, DESCRIBE TABLE
 * EXTENDED, SHOW TBLPROPERTIES, the Spark event log or the plan text.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SecretsTest {
  static final String TOKEN = "tok-SECRET-static-1";
  static final String CLIENT_SECRET = "oauth-SECRET-cs-2";
  static final String API_KEY = "api-SECRET-key-3";
  static final String VENDED_KEY = "vend-SECRET-sk-4";
  static final String VENDED_SESSION = "vend-SECRET-st-5";
  static final List<String> SECRETS = List.of(TOKEN, CLIENT_SECRET, API_KEY, VENDED_KEY,
      VENDED_SESSION);
  /** Spark's default, plus the option names of this catalog that hold secrets. */
  static final String REDACTION_REGEX =
      "(?i)secret|password|token|access[.]key|api_key|credential";
  private FaultsFixture f;
  private FaultProxy proxy;
  private OAuthEndpoint oauth;

  @BeforeAll
  void start() {
    f = FaultsFixture.get();
    proxy = FaultProxy.start(f.server.uri());
    oauth = proxy.requireOAuth("sec-client", CLIENT_SECRET, Duration.ofSeconds(60));
    oauth.alsoAccept(TOKEN);
    f.registerCatalog("fs_o", proxy.uri(), Map.of(
        "oauth2.client-id", "sec-client",
        "oauth2.client-secret", CLIENT_SECRET,
        "oauth2.token-uri", proxy.uri() + "/oauth/token",
        "api_key", API_KEY));
    f.registerCatalog("fs_t", proxy.uri(), Map.of("token", TOKEN));
    f.registerCatalog("fs_bad", proxy.uri(), Map.of(
        "oauth2.client-id", "sec-client", "oauth2.client-secret", "oauth-SECRET-wrong-6",
        "oauth2.token-uri", proxy.uri() + "/oauth/token", "api_key", API_KEY));
  }

  @AfterAll
  void stop() {
    proxy.close();
  }

  /** Vended credentials, as a server that hands out temporary storage keys would add them. */
  private void vendCredentials() {
    proxy.on("POST", "table/describe").always().rewrite(node -> {
      ObjectNode so = node.putObject("storage_options");
      so.put("aws_access_key_id", "AKIAVENDEDKEYID");
      so.put("aws_secret_access_key", VENDED_KEY);
      so.put("aws_session_token", VENDED_SESSION);
      so.put("expires_at_millis", Long.toString(System.currentTimeMillis() + 3_600_000));
      return node;
    });
  }

  @Test
  void noSecretAppearsAnywhereAUserOrOperatorLooks() throws Exception {
    vendCredentials();
    Path eventDir = Files.createTempDirectory("faults-eventlog");
    SparkContext sc = f.spark.sparkContext();
    // As deployed: catalogs configured at startup (--conf), so in the SparkConf the event log
    // redacts with, and spark.redaction.regex widened to the key names Spark's default misses
    // (api_key, credential), as docs/robustness.md recommends. The session here is shared, so
    // both are emulated: the listener gets that SparkConf, the session that regex.
    SparkConf deployed = sc.getConf().clone().set("spark.eventLog.enabled", "true")
        .set("spark.redaction.regex", REDACTION_REGEX);
    scala.collection.JavaConverters.mapAsJavaMapConverter(f.spark.conf().getAll()).asJava()
        .forEach((k, v) -> {
          if (k.startsWith("spark.sql.catalog.fs_")) {
            deployed.set(k, v);
          }
        });
    f.spark.sessionState().conf().setConfString("spark.redaction.regex", REDACTION_REGEX);
    EventLoggingListener events = new EventLoggingListener("faults-secrets", Option.empty(),
        eventDir.toUri(), deployed, sc.hadoopConfiguration());
    events.start();
    sc.addSparkListener(events);
    Map<String, String> surfaces = new LinkedHashMap<>();
    try (LogCapture logs = captureLogs()) {
      for (String cat : List.of("fs_o", "fs_t")) {
        String ns = cat + "." + FaultsFixture.unique("sec");
        String t = ns + ".t";
        f.sql("CREATE NAMESPACE " + ns);
        f.sql("CREATE TABLE " + t + " (id BIGINT, s STRING) TBLPROPERTIES ('team' = 'red')");
        f.sql("INSERT INTO " + t + " VALUES (1, 'a'), (2, 'b')");
        assertEquals(2, f.sql("SELECT * FROM " + t).size());
        surfaces.merge("DESCRIBE TABLE EXTENDED", rows(f.sql("DESCRIBE TABLE EXTENDED " + t)),
            String::concat);
        surfaces.merge("SHOW TBLPROPERTIES", rows(f.sql("SHOW TBLPROPERTIES " + t)),
            String::concat);
        surfaces.merge("EXPLAIN EXTENDED", rows(f.sql("EXPLAIN EXTENDED SELECT * FROM " + t
            + " WHERE id > 0")), String::concat);
        surfaces.merge("queryExecution", f.spark.table(t).filter("id > 0").queryExecution()
            .toString(), String::concat);
        surfaces.merge("table.properties", f.spark.sessionState().catalogManager().catalog(cat)
            .toString(), String::concat);
        Exception missing = assertThrows(Exception.class,
            () -> f.sql("SELECT * FROM " + ns + ".missing"));
        surfaces.merge("exception messages", messages(missing), String::concat);
      }
      // A refused secret must not be echoed back either.
      Exception refused = assertThrows(Exception.class, () -> f.sql("SHOW NAMESPACES IN fs_bad"));
      String refusedText = messages(refused);
      assertTrue(refusedText.contains("check the client id, secret and scope"), refusedText);
      surfaces.merge("exception messages", refusedText, String::concat);
      surfaces.put("logs at DEBUG", logs.text());
    } finally {
      sc.listenerBus().waitUntilEmpty();
      sc.removeSparkListener(events);
      events.stop();
    }
    try (var files = Files.list(eventDir)) {
      surfaces.put("event log", files.map(SecretsTest::read).collect(Collectors.joining()));
    }
    assertTrue(surfaces.get("event log").contains("SparkListenerSQLExecutionStart"),
        "the event log recorded the statements");
    assertTrue(surfaces.get("logs at DEBUG").contains("DescribeTable"), "DEBUG was captured");
    assertTrue(surfaces.get("SHOW TBLPROPERTIES").contains("team"));
    List<String> leaks = new ArrayList<>();
    surfaces.forEach((where, text) -> {
      for (String s : SECRETS) {
        if (text.contains(s) || text.contains("oauth-SECRET-wrong-6")) {
          leaks.add(s + " in " + where);
        }
      }
    });
    assertEquals(List.of(), leaks);
  }

  private static String rows(List<Row> rows) {
    return rows.stream().map(Row::toString).collect(Collectors.joining("\n"));
  }

  private static String messages(Throwable t) {
    StringWriter w = new StringWriter();
    t.printStackTrace(new java.io.PrintWriter(w));
    return w.toString();
  }

  private static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Everything logged while open: DEBUG for this project, lance and OkHttp, INFO for the rest
   * (Spark at DEBUG would log megabytes of code generation).
   */
  private static LogCapture captureLogs() {
    return new LogCapture(Level.INFO, List.of("io.lancerest", "org.lance", "okhttp3",
        "org.apache.spark.sql.execution.datasources.v2"));
  }
}
