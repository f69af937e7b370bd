package io.lancerest.client.scripted;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.HttpTransport;
import io.lancerest.client.spec.Operation;
import io.lancerest.client.RestRequest;
import io.lancerest.client.error.ErrorCode;
import io.lancerest.client.error.InternalServerException;
import io.lancerest.client.error.InvalidResponseException;
import io.lancerest.client.error.LanceRestException;
import io.lancerest.client.error.NamespaceNotFoundException;
import io.lancerest.client.error.ServiceUnavailableException;
import io.lancerest.client.error.TableNotFoundException;
import io.lancerest.client.error.UnsupportedOperationByServerException;
import io.lancerest.client.model.DescribeTableRequest;
import java.util.List;
import okhttp3.mockwebserver.MockResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every error shape a real deployment produces (the spec's ErrorResponse, the upstream server's
 * own shape, proxies' HTML and text, empty bodies) becomes the right exception with a readable
 * message, and never a JSON parse error.
 */
class ErrorShapesTest extends ScriptedServerTest {
  private static final List<String> NS_T = List.of("ns", "t");

  /** Retries are covered by RetryTest; here every status must surface from a single answer. */
  private HttpTransport single() {
    return transport("retry.max-attempts", "1");
  }

  private LanceRestException fail(Operation op, MockResponse answer) {
    enqueue(answer);
    HttpTransport t = single();
    LanceRestException e = assertThrows(LanceRestException.class,
        () -> t.execute(RestRequest.builder(op).id(NS_T).build()));
    assertNoParserLeak(e);
    return e;
  }

  private static void assertNoParserLeak(LanceRestException e) {
    String m = e.getMessage();
    for (String bad : new String[] {"JsonParse", "Unrecognized token", "Unexpected character",
        "com.fasterxml", "<html", "<body"}) {
      assertFalse(m.contains(bad), "message shows '" + bad + "': " + m);
    }
  }

  @ParameterizedTest(name = "code {0} -> {1}")
  @CsvSource({
      "0, UnsupportedOperationByServerException",
      "1, NamespaceNotFoundException",
      "2, NamespaceAlreadyExistsException",
      "3, NamespaceNotEmptyException",
      "4, TableNotFoundException",
      "5, TableAlreadyExistsException",
      "6, TableIndexNotFoundException",
      "7, TableIndexAlreadyExistsException",
      "8, TableTagNotFoundException",
      "9, TableTagAlreadyExistsException",
      "10, TransactionNotFoundException",
      "11, TableVersionNotFoundException",
      "12, TableColumnNotFoundException",
      "13, InvalidInputException",
      "14, ConflictException",
      "15, ForbiddenException",
      "16, UnauthenticatedException",
      "17, ServiceUnavailableException",
      "18, InternalServerException",
      "19, ConflictException",
      "20, InvalidInputException",
      "21, ThrottledException",
      "22, TableBranchNotFoundException",
      "23, TableBranchAlreadyExistsException"})
  void specErrorResponseIsClassifiedByCode(int code, String exceptionClass) throws Exception {
    ErrorCode ec = ErrorCode.fromCode(code);
    String body = "{\"error\":\"problem " + code + "\",\"code\":" + code
        + ",\"detail\":\"details here\",\"instance\":\"/v1/table/ns$t/describe\"}";

    LanceRestException e = fail(Operation.DESCRIBE_TABLE,
        json(ec.usualStatus(), body).setHeader("x-request-id", "req-" + code));

    assertEquals(Class.forName("io.lancerest.client.error." + exceptionClass), e.getClass());
    assertEquals(ec, e.code());
    assertEquals(ec.usualStatus(), e.httpStatus());
    assertEquals(Operation.DESCRIBE_TABLE, e.operation());
    assertEquals("ns.t", e.identifier());
    assertEquals("problem " + code + ": details here", e.serverMessage());
    assertEquals("req-" + code, e.requestId());
    String m = e.getMessage();
    assertTrue(m.startsWith("DescribeTable 'ns.t': "), m);
    assertTrue(m.contains("(server said: problem " + code + ": details here)"), m);
    assertTrue(m.endsWith("[HTTP " + ec.usualStatus() + ", code " + code + ", request id req-"
        + code + "]"), m);
  }

  @Test
  void specCodeWinsOverAnUnusualStatus() {
    LanceRestException e = fail(Operation.DESCRIBE_TABLE,
        json(400, "{\"error\":\"no such table\",\"code\":4}"));
    assertEquals(TableNotFoundException.class, e.getClass());
  }

  @Test
  void upstreamShapeWithAWrongTypeIsReadByItsMessage() {
    LanceRestException e = fail(Operation.DESCRIBE_TABLE, json(404,
        "{\"error\":{\"message\":\"Table 'ns1$nope' not found\","
            + "\"type\":\"NamespaceNotFoundException\"}}").setHeader("x-request-id", "abc-1"));

    assertEquals(TableNotFoundException.class, e.getClass());
    assertEquals("DescribeTable 'ns.t': table not found (server said: Table 'ns1$nope' not "
        + "found) [HTTP 404, request id abc-1]", e.getMessage());
    assertEquals("abc-1", e.requestId());
    assertNull(e.code());
  }

  @Test
  void upstreamNamespaceNotFoundStaysANamespaceError() {
    LanceRestException e = fail(Operation.LIST_TABLES, json(404,
        "{\"error\":{\"message\":\"Namespace 'ns' not found\","
            + "\"type\":\"NamespaceNotFoundException\"}}"));
    assertEquals(NamespaceNotFoundException.class, e.getClass());
  }

  @Test
  void tableNamedLikeASubObjectIsStillATable() {
    LanceRestException e = fail(Operation.DESCRIBE_TABLE, json(404,
        "{\"error\":{\"message\":\"Table tags_daily not found\",\"type\":\"X\"}}"));
    assertEquals(TableNotFoundException.class, e.getClass());
  }

  @Test
  void tableVersionNotFoundNamesTheVersion() {
    LanceRestException e = fail(Operation.DESCRIBE_TABLE, json(404,
        "{\"error\":{\"message\":\"Table version 9 not found\",\"type\":\"X\"}}"));
    assertEquals("TableVersionNotFoundException", e.getClass().getSimpleName());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "{\"error\":{\"message\":\"Not supported: rename is not implemented\",\"type\":\"X\"}}",
      "Not supported: rename is not implemented"})
  void notImplementedAnsweredAs500IsUnsupported(String body) {
    LanceRestException e = fail(Operation.RENAME_TABLE, json(500, body));

    assertEquals(UnsupportedOperationByServerException.class, e.getClass());
    assertEquals("RenameTable 'ns.t': the server does not support this operation (server said: "
        + "Not supported: rename is not implemented). This REST namespace server does not "
        + "implement RenameTable [HTTP 500]", e.getMessage());
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(value = Operation.class,
      names = {"CREATE_MATERIALIZED_VIEW", "REFRESH_MATERIALIZED_VIEW"})
  void emptyNotFoundOnMaterializedViewRoutesIsUnsupported(Operation op) {
    LanceRestException e = fail(op, new MockResponse().setResponseCode(404));

    assertEquals(UnsupportedOperationByServerException.class, e.getClass());
    assertTrue(e.getMessage().startsWith(
        op.specName() + " 'ns.t': the server has no route for this operation"), e.getMessage());
  }

  @Test
  void emptyNotFoundOnATableRouteIsTableNotFound() {
    LanceRestException e = fail(Operation.DESCRIBE_TABLE, new MockResponse().setResponseCode(404));
    assertEquals(TableNotFoundException.class, e.getClass());
    assertEquals("DescribeTable 'ns.t': table not found [HTTP 404]", e.getMessage());
  }

  @Test
  void htmlFromAProxyIsReducedToItsText() {
    String html = "<html><head><title>502 Bad Gateway</title><style>body{color:red}</style>"
        + "<script>var x = 1;</script></head><body><center><h1>502 Bad Gateway</h1></center>"
        + "<hr><center>nginx</center></body></html>";
    LanceRestException e = fail(Operation.DESCRIBE_TABLE,
        new MockResponse().setResponseCode(502).setHeader("Content-Type", "text/html")
            .setBody(html));

    assertEquals(ServiceUnavailableException.class, e.getClass());
    assertEquals("502 Bad Gateway 502 Bad Gateway nginx", e.serverMessage());
    assertTrue(e.getMessage().contains("try again later"), e.getMessage());
  }

  @Test
  void emptyInternalErrorHasAPlainMessage() {
    LanceRestException e = fail(Operation.DESCRIBE_TABLE, new MockResponse().setResponseCode(500));
    assertEquals(InternalServerException.class, e.getClass());
    assertEquals("DescribeTable 'ns.t': internal server error [HTTP 500]", e.getMessage());
  }

  @Test
  void plainTextUnavailableKeepsTheText() {
    LanceRestException e = fail(Operation.CREATE_NAMESPACE, new MockResponse()
        .setResponseCode(503).setHeader("Content-Type", "text/plain")
        .setBody("upstream connect error or disconnect/reset before headers\n"));
    assertEquals(ServiceUnavailableException.class, e.getClass());
    assertEquals("upstream connect error or disconnect/reset before headers", e.serverMessage());
  }

  @Test
  void malformedJsonErrorBodyIsReadAsText() {
    LanceRestException e = fail(Operation.DESCRIBE_TABLE,
        json(404, "{\"error\": {\"message\": \"Table 'ns$t' not fo"));
    assertEquals(TableNotFoundException.class, e.getClass());
    assertTrue(e.getMessage().contains("Table 'ns$t' not fo"), e.getMessage());
  }

  @Test
  void jsonErrorWithoutMessageFallsBackToTheStatus() {
    LanceRestException e = fail(Operation.DESCRIBE_TABLE, json(409, "{\"unexpected\":[1,2]}"));
    assertEquals("ConflictException", e.getClass().getSimpleName());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "{\"location\": \"/x\", ",
      "<html>ok</html>",
      "[1,2,3]",
      "{\"version\": \"not a number\"}"})
  void malformedSuccessBodyIsAnInvalidResponse(String body) {
    enqueue(ok(body).setHeader("x-request-id", "r-9"));

    InvalidResponseException e = assertThrows(InvalidResponseException.class,
        () -> client().describeTable(new DescribeTableRequest().id(NS_T)));

    assertEquals(200, e.httpStatus());
    assertEquals("r-9", e.requestId());
    assertTrue(e.getMessage().startsWith("DescribeTable 'ns.t': the server answered HTTP 200 "
        + "with a body that is not a valid DescribeTable response"), e.getMessage());
    assertTrue(e.getMessage().contains("Check that 'uri' points at a Lance REST namespace "
        + "server"), e.getMessage());
  }
}
