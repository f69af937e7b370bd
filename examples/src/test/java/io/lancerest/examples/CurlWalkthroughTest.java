package io.lancerest.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code examples/curl/walkthrough.sh} as a newcomer runs it, against the real dir server and
 * view service it starts (on free ports, with this JVM's class path instead of Maven's): every
 * step answers as docs/operations.md shows, and the script leaves no server and no folder.
 */
@Tag("slow")
class CurlWalkthroughTest {
  /** Three JVMs (dir server, view service, SqlRunner) and a refresh on a busy machine. */
  private static final long LIMIT_SECONDS = 300;
  private static final String UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

  @Test
  void theScriptRunsEveryStepAndTheDocsShowItsCommands() throws Exception {
    Path root = repositoryRoot();
    Path work = root.resolve("examples/target/curl-walkthrough-test");
    int lancePort = freePort();
    int servicePort = freePort();
    ProcessBuilder pb = new ProcessBuilder("bash", "examples/curl/walkthrough.sh")
        .directory(root.toFile()).redirectErrorStream(true);
    pb.environment().put("LANCE_CLASSPATH", System.getProperty("java.class.path"));
    pb.environment().put("LANCE_PORT", Integer.toString(lancePort));
    pb.environment().put("SERVICE_PORT", Integer.toString(servicePort));
    pb.environment().put("WORK", work.toString());
    pb.environment().put("WAIT_SECONDS", "120");
    Path log = Files.createTempFile("curl-walkthrough", ".out");
    pb.redirectOutput(log.toFile());
    Process p = pb.start();
    String out;
    try {
      boolean ended = p.waitFor(LIMIT_SECONDS, TimeUnit.SECONDS);
      out = Files.readString(log);
      if (!ended) {
        p.descendants().forEach(ProcessHandle::destroy);
        p.destroy();
        throw new AssertionError("walkthrough.sh did not end within " + LIMIT_SECONDS
            + " s; its output so far:\n" + out);
      }
    } finally {
      Files.deleteIfExists(log);
    }
    System.out.println(out); // into the surefire report's -output.txt
    assertEquals(0, p.exitValue(), out);

    List<String> lines = Arrays.asList(out.split("\n"));
    assertEquals("{\"version\":2}", after(lines, "\"with_no_data\": true}'"), out);
    assertTrue(after(lines, "/job/cancel' -H").contains("\"status\":\"CANCELLED\""), out);
    String done = after(lines, "== 8. follow the first job to its end");
    assertTrue(done.contains("\"status\":\"DONE\"") && done.contains("\"rows_inserted\":3"),
        out);
    String list = after(lines, "/job/list' -H");
    assertEquals(2, list.split("\"job_id\"").length - 1, list);

    // nothing left: the folder is removed, both ports are free again
    assertFalse(Files.exists(work), work + " was left behind");
    for (int port : new int[] {lancePort, servicePort}) {
      try (Socket s = new Socket("127.0.0.1", port)) {
        throw new AssertionError("a server still listens on port " + port);
      } catch (IOException refused) {
        // stopped
      }
    }

    // docs/operations.md shows the same commands, job ids aside
    String doc = Files.readString(root.resolve("docs/operations.md"), StandardCharsets.UTF_8);
    int from = doc.indexOf("<!-- walkthrough -->");
    int to = doc.indexOf("<!-- /walkthrough -->");
    assertTrue(from >= 0 && to > from, "docs/operations.md has no <!-- walkthrough --> block");
    assertEquals(commands(out.replace("127.0.0.1:" + servicePort, "127.0.0.1:2334")),
        commands(doc.substring(from, to)));
  }

  /** The line after the first line containing {@code marker}. */
  private static String after(List<String> lines, String marker) {
    for (int i = 0; i + 1 < lines.size(); i++) {
      if (lines.get(i).contains(marker)) {
        return lines.get(i + 1);
      }
    }
    throw new AssertionError("no line with '" + marker + "' in:\n" + String.join("\n", lines));
  }

  /** The {@code $ curl} lines, with job ids as {@code <job id>}. */
  private static List<String> commands(String text) {
    return text.lines().filter(l -> l.startsWith("$ curl"))
        .map(l -> l.replaceAll(UUID, "<job id>").replaceAll("…", "<job id>")).toList();
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static Path repositoryRoot() {
    Path here = Path.of("").toAbsolutePath();
    return Files.exists(here.resolve("examples/curl/walkthrough.sh")) ? here : here.getParent();
  }
}
