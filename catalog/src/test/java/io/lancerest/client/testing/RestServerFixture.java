package io.lancerest.client.testing;

import io.lancerest.client.LanceRestClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashMap;
import java.util.Map;
import org.lance.namespace.RestAdapter;

/**
 * The upstream REST namespace server ({@code RestAdapter} of lance-core, "dir" backend) running
 * in-process over a fresh temporary directory, on an ephemeral port. Start one per test class
 * (e.g. in {@code @BeforeAll}) and close it in {@code @AfterAll}: closing stops the server and
 * deletes the directory.
 */
public final class RestServerFixture implements AutoCloseable {
  private final Path root;
  private final RestAdapter adapter;
  private final int port;

  private RestServerFixture(Path root, RestAdapter adapter) {
    this.root = root;
    this.adapter = adapter;
    this.port = adapter.getPort();
  }

  /** Starts a server over a new temporary directory. */
  public static RestServerFixture start() {
    try {
      Path dir = Files.createTempDirectory("lance-rest-fixture");
      RestAdapter a = new RestAdapter("dir", Map.of("root", dir.toString()), "127.0.0.1", 0);
      a.start();
      return new RestServerFixture(dir, a);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Base URI of the server, e.g. {@code http://127.0.0.1:41234}. */
  public String uri() {
    return "http://127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  /** The directory the server serves; tables live below it. */
  public Path rootDir() {
    return root;
  }

  /** Client options pointing at this server, plus {@code extra}. */
  public Map<String, String> clientOptions(Map<String, String> extra) {
    Map<String, String> o = new HashMap<>(extra);
    o.put("uri", uri());
    return o;
  }

  /** A new client for this server; the caller closes it. */
  public LanceRestClient newClient() {
    return LanceRestClient.create(clientOptions(Map.of()));
  }

  @Override
  public void close() {
    try {
      adapter.close();
    } finally {
      deleteTree(root);
    }
  }

  private static void deleteTree(Path dir) {
    try {
      Files.walkFileTree(dir, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
          Files.deleteIfExists(file);
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
          Files.deleteIfExists(d);
          return FileVisitResult.CONTINUE;
        }
      });
    } catch (IOException ignored) {
      // best effort: a temp directory left behind is harmless
    }
  }
}
