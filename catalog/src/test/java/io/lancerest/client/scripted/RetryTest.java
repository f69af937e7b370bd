package io.lancerest.client.scripted;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.HttpTransport;
import io.lancerest.client.LanceRestClient;
import io.lancerest.client.spec.Operation;
import io.lancerest.client.RestRequest;
import io.lancerest.client.error.CommunicationException;
import io.lancerest.client.error.InternalServerException;
import io.lancerest.client.error.LanceRestException;
import io.lancerest.client.error.ServiceUnavailableException;
import io.lancerest.client.error.ThrottledException;
import io.lancerest.client.model.CreateNamespaceRequest;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DescribeTableResponse;
import io.lancerest.client.model.DropNamespaceRequest;
import io.lancerest.client.model.ListTablesRequest;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import okhttp3.mockwebserver.MockResponse;
import okhttp3.mockwebserver.SocketPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Retries over real HTTP: decided by the operation (read or mutation), never by the HTTP method,
 * since almost every route is a POST.
 */
class RetryTest extends ScriptedServerTest {
  private static final String TABLE = "{\"location\":\"/data/ns/t.lance\",\"version\":3}";
  private static final List<String> NS_T = List.of("ns", "t");

  /** The operations the tests drive, each as a call through the public surface. */
  enum Call {
    DESCRIBE_TABLE(true, "POST"),
    LIST_TABLES(true, "GET"),
    CREATE_NAMESPACE(false, "POST"),
    DROP_NAMESPACE(false, "POST"),
    DROP_TABLE(false, "POST");

    final boolean read;
    final String method;

    Call(boolean read, String method) {
      this.read = read;
      this.method = method;
    }

    void run(HttpTransport t) {
      LanceRestClient c = new LanceRestClient(t);
      switch (this) {
        case DESCRIBE_TABLE -> c.describeTable(new DescribeTableRequest().id(NS_T));
        case LIST_TABLES -> c.listTables(new ListTablesRequest().id(List.of("ns")));
        case CREATE_NAMESPACE -> c.createNamespace(
            new CreateNamespaceRequest().id(List.of("ns")));
        case DROP_NAMESPACE -> c.dropNamespace(new DropNamespaceRequest().id(List.of("ns")));
        case DROP_TABLE -> t.execute(RestRequest.builder(Operation.DROP_TABLE).id(NS_T).build());
        default -> throw new AssertionError(this);
      }
    }
  }

  private static MockResponse success() {
    // Valid for every call above: unknown fields are ignored, missing ones are null.
    return ok("{\"location\":\"/x\",\"tables\":[\"t\"]}");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(ints = {500, 502, 503, 504, 408})
  void readIsRetriedOnTransientStatusAndThenSucceeds(int status) {
    enqueue(json(status, "{\"error\":\"blip\"}"), ok(TABLE));

    DescribeTableResponse r = client().describeTable(new DescribeTableRequest().id(NS_T));

    assertEquals(3L, r.getVersion());
    assertEquals(2, requestCount());
    assertEquals(1, waits.size());
  }

  @Test
  void getReadIsRetriedLikePostRead() {
    enqueue(json(502, ""), success());
    Call.LIST_TABLES.run(transport());
    assertEquals(2, requestCount());
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(value = SocketPolicy.class,
      names = {"DISCONNECT_AT_START", "DISCONNECT_AFTER_REQUEST"})
  void readIsRetriedAfterConnectionReset(SocketPolicy policy) {
    enqueue(new MockResponse().setSocketPolicy(policy), ok(TABLE));

    DescribeTableResponse r = client().describeTable(new DescribeTableRequest().id(NS_T));

    assertEquals("/data/ns/t.lance", r.getLocation());
    assertEquals(2, requestCount());
    assertEquals(1, waits.size());
  }

  @Test
  void readIsRetriedAfterReadTimeout() {
    enqueue(ok(TABLE).setHeadersDelay(2, TimeUnit.SECONDS), ok(TABLE));

    long start = System.nanoTime();
    client("read-timeout-ms", "300").describeTable(new DescribeTableRequest().id(NS_T));

    assertEquals(2, requestCount());
    assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2),
        "the slow answer must be abandoned at the read timeout, not awaited");
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @org.junit.jupiter.params.provider.CsvSource({
      "CREATE_NAMESPACE, 500", "CREATE_NAMESPACE, 502", "CREATE_NAMESPACE, 504",
      "CREATE_NAMESPACE, 408", "DROP_NAMESPACE, 500", "DROP_TABLE, 502", "DROP_TABLE, 500"})
  void mutationIsNotRetriedOnServerError(Call call, int status) {
    enqueue(json(status, "{\"error\":\"boom\"}"), success());

    LanceRestException e = assertThrows(LanceRestException.class, () -> call.run(transport()));

    assertEquals(1, requestCount(), "a mutation must reach the server exactly once");
    assertEquals(status, e.httpStatus());
    Class<?> expected =
        status == 500 ? InternalServerException.class : ServiceUnavailableException.class;
    assertEquals(expected, e.getClass());
    assertTrue(waits.isEmpty());
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(value = Call.class, names = {"CREATE_NAMESPACE", "DROP_NAMESPACE", "DROP_TABLE"})
  void mutationIsNotRetriedAfterResetAndItsOutcomeIsUnknown(Call call) {
    enqueue(new MockResponse().setSocketPolicy(SocketPolicy.DISCONNECT_AFTER_REQUEST), success());

    CommunicationException e =
        assertThrows(CommunicationException.class, () -> call.run(transport()));

    assertEquals(1, requestCount());
    assertTrue(e.isOutcomeUnknown());
    assertTrue(e.getMessage().contains("may or may not have applied"), e.getMessage());
  }

  @Test
  void mutationIsNotRetriedAfterDisconnectAtStart() {
    enqueue(new MockResponse().setSocketPolicy(SocketPolicy.DISCONNECT_AT_START), success());

    CommunicationException e = assertThrows(CommunicationException.class,
        () -> Call.CREATE_NAMESPACE.run(transport()));

    assertEquals(1, requestCount());
    assertTrue(e.isOutcomeUnknown());
  }

  @Test
  void mutationIsNotRetriedAfterReadTimeoutAndItsOutcomeIsUnknown() {
    enqueue(success().setHeadersDelay(2, TimeUnit.SECONDS), success());

    CommunicationException e = assertThrows(CommunicationException.class,
        () -> Call.CREATE_NAMESPACE.run(transport("read-timeout-ms", "300")));

    assertEquals(1, requestCount());
    assertTrue(e.isOutcomeUnknown());
    assertInstanceOf(SocketTimeoutException.class, e.getCause());
    assertEquals("CreateNamespace 'ns': timed out. The server may or may not have applied this "
        + "change; re-read the object before acting again", e.getMessage());
  }

  @Test
  void readFailureIsNotOutcomeUnknown() {
    enqueue(new MockResponse().setSocketPolicy(SocketPolicy.DISCONNECT_AFTER_REQUEST));

    CommunicationException e = assertThrows(CommunicationException.class,
        () -> Call.DESCRIBE_TABLE.run(transport("retry.max-attempts", "1")));

    assertFalse(e.isOutcomeUnknown());
  }

  @Test
  void mutationIsNotRetriedOn503WithoutRetryAfter() {
    enqueue(json(503, "{\"error\":\"down\"}"), success());

    assertThrows(ServiceUnavailableException.class,
        () -> Call.CREATE_NAMESPACE.run(transport()));
    assertEquals(1, requestCount());
  }

  @Test
  void mutationIsRetriedOn503WithRetryAfter() {
    enqueue(json(503, "{}").setHeader("Retry-After", "2"), success());

    Call.CREATE_NAMESPACE.run(transport());

    assertEquals(2, requestCount());
    assertEquals(List.of(Duration.ofSeconds(2)), waits);
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Call.class)
  void everyOperationIsRetriedOn429(Call call) throws InterruptedException {
    enqueue(json(429, "{\"error\":\"slow down\"}"), success());

    call.run(transport());

    assertEquals(2, requestCount());
    assertEquals(call.method, next().getMethod());
  }

  @Test
  void retryAfterInSecondsIsHonoured() {
    enqueue(json(429, "{}").setHeader("Retry-After", "7"), ok(TABLE));

    Call.DESCRIBE_TABLE.run(transport());

    assertEquals(List.of(Duration.ofSeconds(7)), waits);
  }

  @Test
  void retryAfterAsHttpDateIsHonoured() {
    String date = DateTimeFormatter.RFC_1123_DATE_TIME.format(
        NOW.plusSeconds(12).atZone(ZoneOffset.UTC));
    enqueue(json(503, "{}").setHeader("Retry-After", date), success());

    Call.DROP_TABLE.run(transport());

    assertEquals(List.of(Duration.ofSeconds(12)), waits);
  }

  @Test
  void retryAfterIsCappedSoAHostileServerCannotParkTheClient() {
    enqueue(json(429, "{}").setHeader("Retry-After", "86400"), ok(TABLE));

    Call.DESCRIBE_TABLE.run(transport());

    assertEquals(List.of(Duration.ofMinutes(2)), waits);
  }

  @Test
  void backoffGrowsExponentiallyWithJitterUpToTheCap() {
    for (int i = 0; i < 5; i++) {
      enqueue(json(503, "{}"));
    }
    HttpTransport t = transport("retry.max-attempts", "5", "retry.initial-backoff-ms", "100",
        "retry.max-backoff-ms", "300");

    assertThrows(ServiceUnavailableException.class, () -> Call.DESCRIBE_TABLE.run(t));

    assertEquals(5, requestCount());
    assertEquals(4, waits.size());
    long[][] bounds = {{50, 100}, {100, 200}, {150, 300}, {150, 300}};
    for (int i = 0; i < 4; i++) {
      long ms = waits.get(i).toMillis();
      assertTrue(ms >= bounds[i][0] && ms <= bounds[i][1], "wait " + i + " was " + ms + " ms");
    }
  }

  @ParameterizedTest(name = "max-attempts {0}")
  @ValueSource(ints = {1, 2, 4})
  void attemptsAreConfigurable(int attempts) {
    for (int i = 0; i < attempts + 1; i++) {
      enqueue(json(429, "{}"));
    }

    ThrottledException e = assertThrows(ThrottledException.class,
        () -> Call.CREATE_NAMESPACE.run(transport("retry.max-attempts", "" + attempts)));

    assertEquals(attempts, requestCount());
    assertEquals(attempts - 1, waits.size());
    assertTrue(e.getMessage().contains("raise 'retry.max-attempts'"), e.getMessage());
  }

  @Test
  void unknownHostIsNotRetriedAndFailsFast() {
    HttpTransport t = transport(Map.of("uri", "http://nonexistent.invalid",
        "retry.max-attempts", "5", "call-timeout-ms", "5000"));

    long start = System.nanoTime();
    CommunicationException e = assertThrows(CommunicationException.class,
        () -> Call.DESCRIBE_TABLE.run(t));

    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertInstanceOf(UnknownHostException.class, e.getCause());
    assertTrue(waits.isEmpty(), "no retry after an unknown host");
    assertTrue(ms < 3000, "took " + ms + " ms");
    assertFalse(e.isOutcomeUnknown());
    assertTrue(e.getMessage().startsWith("DescribeTable 'ns.t': could not reach the server "
        + "(UnknownHostException"), e.getMessage());
  }

  @Test
  void connectionRefusedIsRetriedEvenForAMutationBecauseNothingWasSent() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    HttpTransport t = transport(Map.of("uri", "http://127.0.0.1:" + port,
        "retry.max-attempts", "3"));

    CommunicationException e = assertThrows(CommunicationException.class,
        () -> Call.CREATE_NAMESPACE.run(t));

    assertInstanceOf(ConnectException.class, e.getCause());
    assertEquals(2, waits.size());
    assertFalse(e.isOutcomeUnknown(), "a refused connection cannot have applied anything");
  }

  @Test
  void allCallsOfOneRequestCarryTheSameBody() throws InterruptedException {
    enqueue(json(500, "{}"), ok(TABLE));

    Call.DESCRIBE_TABLE.run(transport());

    String first = next().getBody().readUtf8();
    String second = next().getBody().readUtf8();
    assertEquals(first, second);
    assertTrue(first.contains("\"id\":[\"ns\",\"t\"]"), first);
  }
}
