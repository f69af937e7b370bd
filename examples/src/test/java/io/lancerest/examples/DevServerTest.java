package io.lancerest.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.CreateNamespaceRequest;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dev server's start-up as {@code DevServer.main} does it, without Maven: where
 * {@code --root} lands, and the one line a taken port gives.
 */
class DevServerTest {
  @TempDir
  Path dir;

  @Test
  void relativeRootIsTakenFromTheCallersDirectory() throws Exception {
    Path caller = Files.createDirectories(dir.resolve("where-mvn-ran"));
    DevServer.Options options = DevServer.Options.parse(
        new String[] {"--root", "./warehouse", "--port", "0"});
    try (DevServer.Running running = DevServer.start(options, caller);
        LanceRestClient client = LanceRestClient.create(Map.of("uri", running.uri()))) {
      assertEquals(caller.resolve("warehouse"), running.root());
      assertTrue(running.uri().matches("http://127\\.0\\.0\\.1:\\d+"), running.uri());
      client.createNamespace(new CreateNamespaceRequest().id(List.of("ns1")).properties(Map.of()));
      assertTrue(Files.isDirectory(running.root()), running.root().toString());
      assertEquals(List.of("ns1"), client.listAllNamespaces(List.of()).toList());
    }
    Path absolute = dir.resolve("elsewhere");
    assertEquals(absolute, CallerPaths.resolve(absolute.toString(), caller));
    assertEquals(dir.resolve("up"), CallerPaths.resolve("../up", caller));
  }

  @Test
  void portInUseIsOneLineNamingThePortAndTheWayOut() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
      int port = taken.getLocalPort();
      DevServer.Options options = DevServer.Options.parse(
          new String[] {"--root", dir.toString(), "--port", String.valueOf(port)});
      DevServer.StartException e = assertThrows(DevServer.StartException.class,
          () -> DevServer.start(options, dir).close());
      assertEquals("port " + port + " on 127.0.0.1 is already in use (is another DevServer "
          + "running?): stop that process, or start this one with --port <another port> "
          + "(--port 0 picks a free one)", e.getMessage());
    }
  }

  @Test
  void badArgumentsSayWhich() {
    assertEquals("--port must be a number from 0 to 65535, got '23x3'",
        assertThrows(IllegalArgumentException.class,
            () -> DevServer.Options.parse(new String[] {"--port", "23x3"})).getMessage());
    assertEquals("missing value for --root", assertThrows(IllegalArgumentException.class,
        () -> DevServer.Options.parse(new String[] {"--root"})).getMessage());
    assertEquals("unknown option --dir", assertThrows(IllegalArgumentException.class,
        () -> DevServer.Options.parse(new String[] {"--dir", "x"})).getMessage());
  }
}
