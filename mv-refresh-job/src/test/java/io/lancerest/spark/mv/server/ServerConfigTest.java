package io.lancerest.spark.mv.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The service's flags, without Spark. */
class ServerConfigTest {
  @Test
  void helpListsEveryFlagAndExitsZero() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    assertEquals(0, MaterializedViewServer.run(new String[] {"--help"},
        new PrintStream(out, true, StandardCharsets.UTF_8), System.err));
    String help = out.toString(StandardCharsets.UTF_8);
    for (String flag : List.of("--upstream", "--host", "--port", "--token", "--api-key",
        "--oauth2-credential", "--header", "--delimiter", "--max-concurrent-jobs",
        "--max-queued-jobs", "--max-body-bytes", "--auto-refresh", "--auto-refresh-poll",
        "--auto-refresh-min-versions", "--auto-refresh-cooldown", "--auto-refresh-backoff",
        "--auto-refresh-backoff-max", "--auto-refresh-rescan", "--require-write-permission")) {
      assertTrue(help.contains(flag + " "), flag + " missing from:\n" + help);
    }
  }

  @Test
  void defaultsAndValues() {
    ServerConfig d = ServerConfig.parse(new String[] {"--upstream", "http://up:2333"});
    assertEquals("127.0.0.1", d.host());
    assertEquals(2334, d.port());
    assertEquals(2, d.maxConcurrentJobs());
    assertEquals(16, d.maxQueuedJobs());
    assertEquals(16L << 20, d.maxBodyBytes());
    assertFalse(d.requireWritePermission());
    assertEquals(new ServerConfig.Auto(true, Duration.ofSeconds(10), 1, Duration.ofSeconds(30),
        Duration.ofMinutes(1), Duration.ofHours(1), Duration.ofHours(1)), d.auto());
    assertEquals(Map.of("uri", "http://up:2333"), d.catalogOptions());

    ServerConfig c = ServerConfig.parse(new String[] {"--upstream=http://up", "--port", "0",
        "--token", "env:HOME", "--header", "X-Tenant=t1", "--max-concurrent-jobs", "4",
        "--auto-refresh-poll", "500ms", "--auto-refresh-cooldown", "0", "--max-body-bytes",
        "1m", "--auto-refresh-backoff", "2s", "--auto-refresh-backoff-max", "1min",
        "--auto-refresh-rescan", "10min", "--require-write-permission", "true"});
    assertEquals(0, c.port());
    assertEquals("env:HOME", c.catalogOptions().get("token"));
    assertEquals("t1", c.catalogOptions().get("header.X-Tenant"));
    assertEquals(new ServerConfig.Auto(true, Duration.ofMillis(500), 1, Duration.ZERO,
        Duration.ofSeconds(2), Duration.ofMinutes(1), Duration.ofMinutes(10)), c.auto());
    assertTrue(c.requireWritePermission());
    assertEquals(1L << 20, c.maxBodyBytes());
  }

  @Test
  void secretsNeverReachTheConfigsText() {
    ServerConfig c = ServerConfig.parse(new String[] {"--upstream", "http://up", "--token",
        "tok-123", "--header", "X-Key=hdr-456"});
    assertFalse(c.toString().contains("tok-123"), c.toString());
    assertFalse(c.toString().contains("hdr-456"), c.toString());
  }

  @Test
  void badFlagsNameTheFlagAndExitTwo() throws Exception {
    Map<List<String>, String> cases = Map.of(
        List.of(), "--upstream is required",
        List.of("--upstream", "http://up", "--port", "70000"), "--port must be a whole number",
        List.of("--upstream", "http://up", "--colour", "red"), "Unknown option --colour",
        List.of("--upstream", "http://up", "--auto-refresh", "maybe"),
        "--auto-refresh must be true or false",
        List.of("--upstream", "http://up", "--auto-refresh-poll", "soon"),
        "--auto-refresh-poll must be a duration",
        List.of("--upstream", "http://up", "--token", "a", "--oauth2-credential", "b:c"),
        "--token and --oauth2-credential",
        List.of("--upstream", "http://up", "--auto-refresh-backoff", "1h",
            "--auto-refresh-backoff-max", "10min"),
        "--auto-refresh-backoff-max (600000 ms) must not be shorter than --auto-refresh-backoff",
        List.of("--upstream", "http://up", "--require-write-permission", "yes"),
        "--require-write-permission must be true or false");
    for (Map.Entry<List<String>, String> c : cases.entrySet()) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> ServerConfig.parse(c.getKey().toArray(String[]::new)));
      assertTrue(e.getMessage().contains(c.getValue()), c.getKey() + ": " + e.getMessage());
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      assertEquals(2, MaterializedViewServer.run(c.getKey().toArray(String[]::new), System.out,
          new PrintStream(err, true, StandardCharsets.UTF_8)));
      assertTrue(err.toString(StandardCharsets.UTF_8).contains(c.getValue()), err.toString());
    }
  }
}
