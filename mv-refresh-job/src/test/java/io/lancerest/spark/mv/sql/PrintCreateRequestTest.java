package io.lancerest.spark.mv.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The command line of PrintCreateRequest; the printed body is checked against the service in
 * MaterializedViewServerTest. */
class PrintCreateRequestTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... argv) {
    return PrintCreateRequest.run(argv, new PrintStream(out, true), new PrintStream(err, true),
        () -> {
          throw new AssertionError("no Spark session for a bad command line");
        });
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void helpIsPrintedWithExitCodeZero() {
    assertEquals(0, run("--help"));
    assertTrue(out.toString(StandardCharsets.UTF_8).startsWith("Usage: PrintCreateRequest"));
  }

  @Test
  void aBadCommandLineIsExitCodeTwoNamingTheFlag() {
    assertEquals(2, run("--sql", "CREATE MATERIALIZED VIEW a.b AS SELECT 1 FROM a.t"));
    assertTrue(err().contains("--uri is required"), err());
    err.reset();
    assertEquals(2, run("--uri", "http://127.0.0.1:1"));
    assertTrue(err().contains("--sql is required"), err());
    err.reset();
    assertEquals(2, run("--uri", "http://127.0.0.1:1", "CREATE"));
    assertTrue(err().contains("Unexpected argument 'CREATE'"), err());
    err.reset();
    assertEquals(2, run("--uri", "http://127.0.0.1:1", "--sql", "x", "--token", "s3cr3t-tok",
        "--oauth2-credential", "id:other-s3cr3t"));
    assertTrue(err().contains("--token and --oauth2-credential"), err());
    assertFalse(err().contains("s3cr3t"), err());
  }
}
