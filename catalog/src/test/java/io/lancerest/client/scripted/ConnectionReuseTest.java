package io.lancerest.client.scripted;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.CreateNamespaceRequest;
import io.lancerest.client.model.CreateNamespaceResponse;
import io.lancerest.client.model.DescribeNamespaceRequest;
import java.util.List;
import java.util.Map;
import okhttp3.mockwebserver.SocketPolicy;
import org.junit.jupiter.api.Test;

/**
 * Pooled connections: reused while fresh, dropped after {@code pool.keep-alive-ms}, and a
 * connection the server closed while it sat idle is found out before a mutation is written onto
 * it, so the mutation is sent once, on a new connection, instead of failing as "outcome
 * unknown". (RecordedRequest.getSequenceNumber() is the request's index on its connection.)
 */
class ConnectionReuseTest extends ScriptedServerTest {
  private static final String PROPS = "{\"properties\":{}}";

  private static void describe(LanceRestClient c) {
    c.describeNamespace(new DescribeNamespaceRequest().id(List.of("ns")));
  }

  @Test
  void freshConnectionIsReused() throws Exception {
    enqueue(ok(PROPS), ok(PROPS));
    LanceRestClient c = client();

    describe(c);
    describe(c);

    assertEquals(0, next().getSequenceNumber());
    assertEquals(1, next().getSequenceNumber());
  }

  @Test
  void connectionIdleLongerThanTheKeepAliveIsNotReused() throws Exception {
    enqueue(ok(PROPS), ok(PROPS));
    LanceRestClient c = client("pool.keep-alive-ms", "50");

    describe(c);
    Thread.sleep(300);
    describe(c);

    assertEquals(0, next().getSequenceNumber());
    assertEquals(0, next().getSequenceNumber(), "a new connection");
  }

  @Test
  void mutationAfterTheServerClosedTheIdleConnectionIsSentOnceOnANewConnection()
      throws Exception {
    // The server closes the connection after this answer, without saying so in a header.
    enqueue(ok(PROPS).setSocketPolicy(SocketPolicy.DISCONNECT_AT_END),
        ok("{\"properties\":{\"a\":\"1\"}}"));
    LanceRestClient c = client("pool.keep-alive-ms", "60000");
    describe(c);
    Thread.sleep(1_200); // idle long enough to be checked before reuse

    CreateNamespaceResponse r =
        c.createNamespace(new CreateNamespaceRequest().id(List.of("ns2")).properties(Map.of()));

    assertEquals(Map.of("a", "1"), r.getProperties());
    assertEquals(2, requestCount(), "the mutation reached the server once");
    next();
    assertEquals(0, next().getSequenceNumber(), "on a new connection");
    assertTrue(waits.isEmpty(), "sent again at once, without backoff: " + waits);
  }
}
