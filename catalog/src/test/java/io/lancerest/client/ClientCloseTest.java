package io.lancerest.client;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What closing a client releases: its OAuth2 refresh thread, and every later call. */
class ClientCloseTest {
  private static List<Thread> refreshThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("lance-rest-oauth2-refresh") && t.isAlive()).toList();
  }

  @Test
  void theOAuth2RefreshThreadIsADaemonAndStopsOnClose() throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/token", ex -> {
      byte[] body = "{\"access_token\":\"tok\",\"expires_in\":3600}"
          .getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().add("Content-Type", "application/json");
      ex.sendResponseHeaders(200, body.length);
      ex.getResponseBody().write(body);
      ex.close();
    });
    server.createContext("/", ex -> {
      ex.sendResponseHeaders(204, -1);
      ex.close();
    });
    server.start();
    List<Thread> before = refreshThreads();
    String base = "http://127.0.0.1:" + server.getAddress().getPort();
    try {
      LanceRestClient client = LanceRestClient.create(Map.of("uri", base,
          "oauth2.client-id", "id", "oauth2.client-secret", "secret",
          "oauth2.token-uri", base + "/token"));
      client.namespaceExists(List.of("ns")); // fetches a token; its refresh is scheduled
      List<Thread> mine = refreshThreads().stream().filter(t -> !before.contains(t)).toList();
      assertFalse(mine.isEmpty(), "a refresh thread waits for the token's expiry");
      assertTrue(mine.stream().allMatch(Thread::isDaemon), "it never keeps a JVM alive");

      client.close();
      client.close(); // idempotent
      for (Thread t : mine) {
        t.join(10_000);
        assertFalse(t.isAlive(), "the refresh thread ends on close");
      }
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> client.namespaceExists(List.of("ns")));
      assertTrue(e.getMessage().contains(" is closed "), e.getMessage());
    } finally {
      server.stop(0);
    }
  }
}
