package io.lancerest.client.scripted;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.HttpTransport;
import io.lancerest.client.LanceJson;
import io.lancerest.client.LanceRestClient;
import io.lancerest.client.auth.AuthManager;
import io.lancerest.client.auth.OAuth2ClientCredentials;
import io.lancerest.client.auth.Secret;
import io.lancerest.client.error.InvalidResponseException;
import io.lancerest.client.error.LanceRestException;
import io.lancerest.client.model.CountTableRowsRequest;
import io.lancerest.client.model.DescribeNamespaceRequest;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DescribeTableResponse;
import io.lancerest.client.model.Identity;
import io.lancerest.client.testing.LogCapture;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.OkHttpClient;
import okhttp3.mockwebserver.Dispatcher;
import okhttp3.mockwebserver.MockResponse;
import okhttp3.mockwebserver.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Tokens, client secrets, API keys and vended storage credentials reach the wire and nothing
 * else: not exception messages (nor their causes), not toString(), not DEBUG logs.
 */
class SecretsTest extends ScriptedServerTest {
  private static final String TOKEN = "tok-SECRET-1111";
  private static final String API_KEY = "key-SECRET-2222";
  private static final String CLIENT_SECRET = "cs-SECRET-3333";
  private static final String ACCESS_TOKEN = "at-SECRET-4444";
  private static final String USER_TOKEN = "ut-SECRET-5555";
  private static final String STORAGE_KEY = "sk-SECRET-6666";
  private static final String HEADER_SECRET = "hdr-SECRET-7777";
  private static final List<String> ALL = List.of(TOKEN, API_KEY, CLIENT_SECRET, ACCESS_TOKEN,
      USER_TOKEN, STORAGE_KEY, HEADER_SECRET);

  private LogCapture logs;
  /** Everything the tests could show a user or an operator. */
  private final List<String> shown = new ArrayList<>();

  @BeforeEach
  void captureLogs() {
    logs = new LogCapture("io.lancerest");
    shown.clear();
  }

  @AfterEach
  void stopCapture() {
    logs.close();
  }

  private void show(Object o) {
    shown.add(String.valueOf(o));
  }

  /** The message of the exception and of every cause, and the whole stack trace. */
  private void show(Throwable e) {
    StringWriter w = new StringWriter();
    e.printStackTrace(new PrintWriter(w));
    shown.add(w.toString());
  }

  private void assertNothingLeaked() {
    String everything = String.join("\n", shown) + "\n" + logs.text();
    for (String secret : ALL) {
      assertFalse(everything.contains(secret), secret + " leaked into:\n" + everything);
    }
  }

  private LanceRestException failing(Runnable call) {
    LanceRestException e = assertThrows(LanceRestException.class, call::run);
    show(e);
    return e;
  }

  @Test
  void staticCredentialsStayOffMessagesToStringAndLogs() {
    HttpTransport t = transport("token", TOKEN, "api_key", API_KEY,
        "header.X-Auth-Token", HEADER_SECRET, "header.X-Team", "blue",
        "retry.max-attempts", "3");
    LanceRestClient c = new LanceRestClient(t);
    show(t.config());

    enqueue(json(503, "{\"error\":\"busy\"}"), json(401, "{\"error\":\"Bearer " + "rejected\"}"));
    failing(() -> c.describeNamespace(new DescribeNamespaceRequest().id(List.of("ns"))));
    enqueue(json(500, "{}"), json(500, "{}"), json(500, "{}"));
    failing(() -> c.describeNamespace(new DescribeNamespaceRequest().id(List.of("ns"))));
    enqueue(json(403, "{\"error\":\"key " + API_KEY + " may not read ns\"}"));
    failing(() -> c.describeNamespace(new DescribeNamespaceRequest().id(List.of("ns"))
        .identity(Identity.bearer(USER_TOKEN))));

    assertTrue(shown.get(0).contains("X-Team=blue"), shown.get(0));
    assertTrue(logs.text().contains("retrying in"), "DEBUG logging is not captured:\n"
        + logs.text());
    assertNothingLeaked();
  }

  @Test
  void oauth2SecretAndAccessTokenStayOffMessagesToStringAndLogs() throws Exception {
    AtomicInteger tokenCalls = new AtomicInteger();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest r) {
        if (r.getPath().startsWith("/oauth/token")) {
          // first: a token; then the endpoint is down (its error page echoes the request)
          return tokenCalls.incrementAndGet() == 1
              ? ok("{\"access_token\":\"" + ACCESS_TOKEN + "\",\"expires_in\":3600}")
              : json(500, "{\"error\":\"failed for " + r.getBody().readUtf8() + "\"}");
        }
        return json(401, "{\"error\":\"expired " + r.getHeader("Authorization") + "\"}");
      }
    });
    HttpTransport t = transport("oauth2.client-id", "job", "oauth2.client-secret", CLIENT_SECRET,
        "oauth2.scope", "all");
    show(t.config());
    LanceRestClient c = new LanceRestClient(t);

    failing(() -> c.describeNamespace(new DescribeNamespaceRequest().id(List.of("ns"))));
    OAuth2ClientCredentials direct = new OAuth2ClientCredentials(new OkHttpClient(),
        URI.create(uri() + "/oauth/token"), "job", Secret.of(CLIENT_SECRET), null, Map.of(),
        Clock.systemUTC());
    show(direct);
    show(assertThrows(RuntimeException.class, direct::refreshNow));
    direct.close();
    show(AuthManager.fixed(Secret.of(TOKEN), Secret.of(API_KEY)));

    assertTrue(logs.text().contains("OAuth2"), "refresh failure not logged:\n" + logs.text());
    assertTrue(shown.get(0).contains("job"), shown.get(0));
    assertNothingLeaked();
  }

  @Test
  void vendedStorageCredentialsStayOffToStringAndLogs() {
    enqueue(ok("{\"location\":\"s3://bucket/t.lance\",\"version\":2,\"storage_options\":{"
        + "\"aws_access_key_id\":\"AKIA\",\"aws_secret_access_key\":\"" + STORAGE_KEY + "\","
        + "\"aws_session_token\":\"" + STORAGE_KEY + "\"}}"));
    LanceRestClient c = client();

    DescribeTableResponse r = c.describeTable(new DescribeTableRequest().id(List.of("ns", "t")));
    show(r);

    assertEquals(STORAGE_KEY, r.getStorageOptions().get("aws_secret_access_key"));
    assertNothingLeaked();
  }

  /**
   * A 2xx DescribeTable body the client cannot read, holding vended credentials: the exception
   * says why and where, but neither its message, toString, stack trace nor any cause quotes
   * the body (Jackson's own exception would: it is not attached).
   */
  @ParameterizedTest(name = "{1}")
  @CsvSource(delimiter = '|', value = {
      "{\"location\":\"s3://b/t\",\"storage_options\":{\"k\":\"SECRET\" | JSON ends early at line 1, column 63",
      "{\"version\":\"SECRET\"}                               | field 'version' does not have the expected type",
      "{\"storage_options\":[\"SECRET\"]}                     | field 'storage_options' does not have the expected type",
      "{\"location\": SECRET}                                 | malformed JSON at line 1, column 17",
      "[\"SECRET\"]                                           | expected a JSON object, got ARRAY"})
  void unreadableDescribeTableBodyLeaksNothing(String body, String reason) {
    enqueue(ok(body.replace("SECRET", STORAGE_KEY)));

    InvalidResponseException e = assertThrows(InvalidResponseException.class,
        () -> client().describeTable(new DescribeTableRequest().id(List.of("ns", "t"))));
    show(e);
    show(e.toString());

    assertEquals("DescribeTable 'ns.t': the server answered HTTP 200 with a body that is not a "
        + "valid DescribeTable response (" + reason + ")", e.getMessage().split("\\. Check")[0]);
    assertEquals(null, e.getCause());
    assertNothingLeaked();
  }

  @Test
  void unreadableRowCountLeaksNothing() {
    enqueue(ok("{\"count\":\"" + STORAGE_KEY + "\"}"));

    InvalidResponseException e = assertThrows(InvalidResponseException.class,
        () -> client().countTableRows(new CountTableRowsRequest().id(List.of("ns", "t"))));
    show(e);

    assertTrue(e.getMessage().contains("(expected an integer row count, got text that is not "
        + "one)"), e.getMessage());
    assertNothingLeaked();
  }

  /**
   * Jackson quotes bad values and up to 500 characters of the body in its messages; the reason
   * given for an invalid response must quote nothing.
   */
  @ParameterizedTest(name = "{1}")
  @CsvSource(delimiter = '|', value = {
      "{\"location\":\"s3://b/t\",\"storage_options\":{\"k\":\"SECRET\" | JSON ends early at line 1, column 63",
      "{\"version\":\"SECRET\"}                               | field 'version' does not have the expected type",
      "{\"storage_options\":\"SECRET\"}                       | field 'storage_options' does not have the expected type",
      "{\"location\": SECRET}                                 | malformed JSON at line 1, column 16"})
  void invalidResponseReasonQuotesNothingOfTheBody(String body, String reason) {
    String withSecret = body.replace("SECRET", STORAGE_KEY);
    Exception e = assertThrows(Exception.class, () -> LanceJson.mapper()
        .readValue(withSecret, DescribeTableResponse.class));
    assertTrue(e.getMessage().contains(STORAGE_KEY), "Jackson itself quotes the body");

    assertEquals(reason, InvalidResponseException.reasonWithoutContent(e));
  }
}
