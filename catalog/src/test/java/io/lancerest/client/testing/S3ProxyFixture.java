package io.lancerest.client.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * An S3 API server on 127.0.0.1: s3proxy 2.6.0 with jclouds' {@code filesystem-nio2} backend, run as a
 * child JVM from its own self-contained jar (s3proxy brings Jetty 11, jclouds, Guava 33, logback
 * and the AWS SDK; none of it may meet Spark on the test classpath). The jar is copied into
 * {@code target/s3proxy/} by the maven-dependency-plugin and its path given to the tests as the
 * system property {@value #JAR_PROPERTY}.
 *
 * <p>The bucket {@value #BUCKET} exists from the start. Objects are files below
 * {@link #bucketDir()}, so {@link #keys(String)} lists what was written exactly, without an S3
 * client. Requests are signed (AWS v2 or v4) with a fixed test key pair.
 *
 * <p>s3proxy 2.6.0 ignores {@code If-None-Match: *} on PutObject (a second PUT of the same key
 * overwrites the first and answers 200): lance-core's commits succeed against it, but two writers
 * committing the same version at once are not detected. Tests here commit one writer at a time.
 */
public final class S3ProxyFixture implements AutoCloseable {
  public static final String JAR_PROPERTY = "lancerest.s3proxy.jar";
  public static final String BUCKET = "lance-test";
  public static final String ACCESS_KEY = "s3proxy-test-access";
  public static final String SECRET_KEY = "s3proxy-test-secret";
  public static final String REGION = "us-east-1";
  private static final long START_LIMIT_MS = 60_000;

  private final Path base;
  private final int port;
  private final Process process;
  private final StringBuffer output = new StringBuffer();

  private S3ProxyFixture(Path base, int port, Process process) {
    this.base = base;
    this.port = port;
    this.process = process;
    Thread pump = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          if (output.length() < 200_000) {
            output.append(line).append('\n');
          }
        }
      } catch (IOException ignored) {
        // the child was stopped
      }
    }, "s3proxy-output");
    pump.setDaemon(true);
    pump.start();
  }

  /**
   * Starts s3proxy and waits (at most 60 s) until it answers HTTP; fails naming what did not start.
   */
  public static S3ProxyFixture start() {
    return start(false);
  }

  /**
   * An s3proxy that checks no signature (any key is taken): the upstream of an
   * {@link ExpiringKeyS3Proxy}, which does the checking.
   */
  public static S3ProxyFixture startAnonymous() {
    return start(true);
  }

  private static S3ProxyFixture start(boolean anonymous) {
    String jar = System.getProperty(JAR_PROPERTY);
    if (jar == null || !Files.isRegularFile(Path.of(jar))) {
      throw new AssertionError("s3proxy did not start: its jar is not there (system property "
          + JAR_PROPERTY + "=" + jar + "; the maven-dependency-plugin copies it into"
          + " target/s3proxy/ in process-test-resources)");
    }
    Path base;
    try {
      base = Files.createTempDirectory("s3proxy-fs");
      Files.createDirectories(base.resolve(BUCKET));
    } catch (IOException e) {
      throw new UncheckedIOException("s3proxy did not start: no folder for its backend", e);
    }
    AssertionError last = null;
    for (int attempt = 0; attempt < 3; attempt++) {
      int port = freePort();
      S3ProxyFixture f = launch(jar, base, port, anonymous);
      try {
        f.awaitReady();
        return f;
      } catch (AssertionError e) {
        f.stopProcess();
        last = e;
      }
    }
    deleteTree(base);
    throw last;
  }

  private static S3ProxyFixture launch(String jar, Path base, int port, boolean anonymous) {
    Path props = base.resolveSibling(base.getFileName() + ".properties");
    String conf = String.join("\n",
        "s3proxy.endpoint=http://127.0.0.1:" + port,
        anonymous ? "s3proxy.authorization=none" : "s3proxy.authorization=aws-v2-or-v4",
        "s3proxy.identity=" + ACCESS_KEY,
        "s3proxy.credential=" + SECRET_KEY,
        // object_store's DeleteObjects carries x-amz-checksum-* headers that s3proxy 2.6.0 does
        // not know; it answers 501 NotImplemented to any unknown x-amz- header unless told so.
        "s3proxy.ignore-unknown-headers=true",
        "jclouds.provider=filesystem-nio2",
        "jclouds.identity=local", // the backend's own login, required and unused
        "jclouds.credential=local",
        "jclouds.filesystem.basedir=" + base,
        "");
    try {
      Files.writeString(props, conf);
    } catch (IOException e) {
      throw new UncheckedIOException("s3proxy did not start: cannot write its configuration", e);
    }
    List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx512m", "-jar", jar, "--properties", props.toString());
    try {
      return new S3ProxyFixture(base, port,
          new ProcessBuilder(cmd).redirectErrorStream(true).start());
    } catch (IOException e) {
      throw new UncheckedIOException("s3proxy did not start: cannot start its JVM", e);
    }
  }

  private void awaitReady() {
    long deadline = System.currentTimeMillis() + START_LIMIT_MS;
    while (System.currentTimeMillis() < deadline) {
      if (!process.isAlive()) {
        throw new AssertionError("s3proxy did not start on 127.0.0.1:" + port + ": it exited with "
            + process.exitValue() + "; its output:\n" + output);
      }
      try {
        HttpURLConnection c = (HttpURLConnection) URI.create(endpoint() + "/").toURL()
            .openConnection();
        c.setConnectTimeout(1000);
        c.setReadTimeout(2000);
        c.getResponseCode(); // 403 for an unsigned request: it is serving
        c.disconnect();
        return;
      } catch (IOException notYet) {
        sleep(200);
      }
    }
    throw new AssertionError("s3proxy did not start on 127.0.0.1:" + port + " within "
        + START_LIMIT_MS / 1000 + " s; its output:\n" + output);
  }

  public String endpoint() {
    return "http://127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  /** {@code s3://lance-test/<path>}. */
  public String uri(String path) {
    return "s3://" + BUCKET + "/" + path;
  }

  /** The options lance-core (object_store) needs for this server. */
  public Map<String, String> storageOptions() {
    Map<String, String> o = new LinkedHashMap<>();
    o.put("aws_endpoint", endpoint());
    o.put("aws_region", REGION);
    o.put("aws_access_key_id", ACCESS_KEY);
    o.put("aws_secret_access_key", SECRET_KEY);
    o.put("allow_http", "true");
    o.put("aws_virtual_hosted_style_request", "false");
    return o;
  }

  /** The same options, each key prefixed (e.g. {@code storage.} for the dir server's properties). */
  public Map<String, String> storageOptions(String prefix) {
    Map<String, String> o = new LinkedHashMap<>();
    storageOptions().forEach((k, v) -> o.put(prefix + k, v));
    return o;
  }

  /** The folder holding the bucket's objects, one file each. */
  public Path bucketDir() {
    return base.resolve(BUCKET);
  }

  /** Every object key of the bucket that starts with {@code prefix}, sorted. */
  public List<String> keys(String prefix) {
    Path dir = bucketDir();
    List<String> out = new ArrayList<>();
    try (Stream<Path> all = Files.walk(dir)) {
      all.filter(Files::isRegularFile)
          .map(p -> dir.relativize(p).toString().replace('\\', '/'))
          .filter(k -> k.startsWith(prefix))
          .sorted()
          .forEach(out::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  /** What s3proxy printed so far (for failure messages). */
  public String output() {
    return output.toString();
  }

  private void stopProcess() {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    try {
      stopProcess();
      // Into the test's output file (surefire redirects it): what s3proxy said, for diagnosis.
      System.out.println("s3proxy output:\n" + output);
    } finally {
      deleteTree(base);
      try {
        Files.deleteIfExists(base.resolveSibling(base.getFileName() + ".properties"));
      } catch (IOException ignored) {
        // harmless
      }
    }
  }

  private static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("s3proxy did not start: no free port", e);
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting for s3proxy", e);
    }
  }

  public static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
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
      // best effort
    }
  }
}
