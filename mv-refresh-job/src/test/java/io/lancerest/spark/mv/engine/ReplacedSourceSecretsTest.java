package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.testing.LogCapture;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.result.RefreshResult.JobStatus;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The job record of a refresh over a replaced source quotes where the source lives; a location
 * can carry a credential (a signed URL's {@code sig=…}, an {@code s3://key:secret@…} user
 * part). Here the server keeps its tables under a folder named like a signature, so every
 * source location holds one: it must reach neither the job record (the job log, DESCRIBE's
 * last job) nor the driver's WARN line about the replacement.
 */
class ReplacedSourceSecretsTest {
  private static final String SIGNATURE = "SECRET-sig-7f3a";
  private static EngineFixture f;

  @BeforeAll
  static void start() {
    try {
      Path root = Files.createDirectories(Files.createTempDirectory("mv-secrets")
          .resolve("sig=" + SIGNATURE));
      f = EngineFixture.onServer(Map.of("root", root.toString()), Map.of());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  @Test
  void theReplacedSourcesLocationReachesTheJobRecordAndTheLogWithItsSignatureMasked() {
    ListedKind kind = ListedKind.QUERY; // the note is the driver's, the same for every kind
    String ns = kind.namespaceWithSource(f, "sec");
    String src = "lance." + ns + ".src";
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " " + kind.over(src));
    f.sql("DROP TABLE " + src + " PURGE");
    ListedKind.createSource(f, src, 1000);
    String location = TableStats.location(f, ns, "src");
    assertTrue(location.contains("sig=" + SIGNATURE), "the location carries it: " + location);

    String job = "replaced-secret";
    String log;
    try (LogCapture logs = new LogCapture("io.lancerest.spark.mv")) {
      assertEquals(JobStatus.DONE, f.views().refresh(List.of(ns, "v"), new RefreshOptions(null,
          null, null, null, null, null, null, null, job, false)).status());
      log = logs.text();
    }
    String message = f.views().job(job).message();
    assertTrue(message.startsWith("source replaced: rebuilt (The source table of view " + v
        + " was replaced since the view's last refresh"), message);
    assertTrue(message.contains("sig=***"), "the location is quoted, masked: " + message);
    assertFalse(message.contains(SIGNATURE), message);
    String lastJob = f.sql("DESCRIBE MATERIALIZED VIEW " + v).stream()
        .filter(r -> r.getString(0).equals("Last job")).map(r -> r.getString(1)).findFirst()
        .orElseThrow();
    assertTrue(lastJob.contains("\"job_id\":\"" + job + "\""), lastJob);
    assertFalse(lastJob.contains(SIGNATURE), lastJob);
    String warn = log.lines().filter(l -> l.contains("was replaced since")).findFirst()
        .orElse(null);
    assertTrue(warn != null && warn.startsWith("WARN "), "the replacement is logged:\n" + log);
    assertFalse(warn.contains(SIGNATURE), warn);
  }
}
