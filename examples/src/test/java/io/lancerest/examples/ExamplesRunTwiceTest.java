package io.lancerest.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.testing.ChildJvm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.lance.namespace.RestAdapter;

/**
 * Examples a newcomer runs twice in a row: the second run works too, and none leaves anything in
 * the temp directory (each child JVM gets one of its own to check). The others reset their
 * warehouse folder the same way (Quickstart: QuickstartWarehouseTest; try.sql: SqlRunnerTest).
 */
@Tag("slow")
@Execution(ExecutionMode.CONCURRENT) // the work is in child JVMs
class ExamplesRunTwiceTest {
  /** A Spark start and a view's refresh in a child JVM, on a busy machine. */
  private static final Duration LIMIT = Duration.ofSeconds(240);

  @Test
  void refreshJobSetupRunsTwiceAgainstTheSameServer(@TempDir Path dir) throws IOException {
    Path tmp = Files.createDirectories(dir.resolve("tmp"));
    RestAdapter server = new RestAdapter("dir", Map.of("root", dir.resolve("warehouse")
        .toString()), "127.0.0.1", 0);
    server.start();
    try {
      for (int run = 1; run <= 2; run++) {
        String out = run("RefreshJobSetup, run " + run, RefreshJobSetup.class, tmp,
            "--uri", "http://127.0.0.1:" + server.getPort());
        assertTrue(out.contains("CREATE MATERIALIZED VIEW lance.demo.big_orders"), out);
        assertTrue(out.contains("|id |customer|amount|"), out);
      }
    } finally {
      server.close();
    }
    assertEquals(List.of(), leftIn(tmp));
  }

  @Test
  void viewServiceExampleRunsTwiceAndKeepsItsWarehouseUnderTarget(@TempDir Path dir)
      throws IOException {
    Path tmp = Files.createDirectories(dir.resolve("tmp"));
    for (int run = 1; run <= 2; run++) {
      String out = run("ViewServiceExample, run " + run, ViewServiceExample.class, tmp);
      assertTrue(out.contains("view rows: [[2,pear], [3,plum], [4,fig]]"), out);
    }
    assertEquals(List.of(), leftIn(tmp));
    assertTrue(Files.isDirectory(Path.of("target/examples-warehouse/view-service")));
  }

  @Test
  void restClientExampleRunsTwice(@TempDir Path dir) throws IOException {
    Path tmp = Files.createDirectories(dir.resolve("tmp"));
    for (int run = 1; run <= 2; run++) {
      run("RestClientExample, run " + run, RestClientExample.class, tmp);
    }
    assertEquals(List.of(), leftIn(tmp));
  }

  private static String run(String what, Class<?> main, Path tmp, String... args) {
    try (ChildJvm child = ChildJvm.start(what, main,
        List.of("-Xmx1g", "-Djava.io.tmpdir=" + tmp), args)) {
      return child.awaitSuccess(LIMIT);
    }
  }

  /** What a child left in its temp directory. */
  private static List<String> leftIn(Path tmp) throws IOException {
    try (Stream<Path> s = Files.list(tmp)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }
}
