package io.lancerest.spark.mv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.error.ErrorCode;
import io.lancerest.client.error.ErrorDetails;
import io.lancerest.client.error.TableNotFoundException;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.result.RefreshResult;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The CLI: parsing, usage errors and exit codes, with the refresh itself substituted. */
class RefreshJobTest {
  private static final RefreshResult OK = new RefreshResult("job-9", RefreshResult.JobStatus.DONE,
      MaterializedViewKind.QUERY, 12L, 100, 3, 0, 2500);

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();
  private final List<RefreshJob.Args> seen = new ArrayList<>();

  private int run(RefreshJob.Runner runner, String... argv) {
    return RefreshJob.run(argv, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), a -> {
          seen.add(a);
          return runner.refresh(a);
        });
  }

  private int run(String... argv) {
    return run(a -> OK, argv);
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void everyFlagMapsToClientOptionsOrRefreshOptions() {
    assertEquals(0, run("--uri", "http://h:2333", "--view", "a.b.`v.1`", "--delimiter", "|",
        "--header", "X-Tenant=t1", "--header=X-Trace=abc=def", "--api-key", "k",
        "--oauth2-credential", "id:secret", "--oauth2-token-uri", "http://h/token",
        "--oauth2-scope", "s", "--src-version", "12", "--concurrency", "8",
        "--max-rows-per-fragment=500", "--intra-applier-concurrency", "4",
        "--source-task-size", "1024", "--output-limit", "99", "--job-id", "nightly", "--force"));
    RefreshJob.Args a = seen.get(0);
    assertEquals(List.of("a", "b", "v.1"), a.viewId());
    assertEquals(Map.of("uri", "http://h:2333", "delimiter", "|", "header.X-Tenant", "t1",
        "header.X-Trace", "abc=def", "api_key", "k", "oauth2.credential", "id:secret",
        "oauth2.token-uri", "http://h/token", "oauth2.scope", "s"), a.catalogOptions());
    assertEquals(new RefreshOptions(12L, 8, 500, 4, 1024, 99L, null, null, "nightly", true),
        a.options());
    assertEquals("refresh-job: view a.b.v.1 job job-9 DONE kind=query source_version=12 "
        + "rows_inserted=100 rows_deleted=3 skipped=0 duration_ms=2500\n", out());
    assertFalse(a.toString().contains("secret") || a.toString().contains("t1"), a.toString());
  }

  @Test
  void helpPrintsEveryFlagAndExitsZero() {
    assertEquals(0, run("--help"));
    for (String flag : List.of("--uri", "--view", "--delimiter", "--header", "--token",
        "--api-key", "--oauth2-credential", "--oauth2-token-uri", "--oauth2-scope",
        "--src-version", "--concurrency", "--max-rows-per-fragment",
        "--intra-applier-concurrency", "--source-task-size", "--output-limit", "--job-id",
        "--force", "Exit codes: 0 done, 1 failed, 2 bad usage or configuration, 3 view or "
            + "source not found.")) {
      assertTrue(out().contains(flag), flag);
    }
    assertTrue(seen.isEmpty());
  }

  @Test
  void usageErrorsExitTwoAndSayWhichFlag() {
    String[][] cases = {
        {"--view", "ns.v"},
        {"--uri", "http://h"},
        {"--uri", "http://h", "--view", "v"},
        {"--uri", "http://h", "--view", "ns.v", "--colour", "red"},
        {"--uri", "http://h", "--view", "ns.v", "--concurrency", "many"},
        {"--uri", "http://h", "--view", "ns.v", "--concurrency", "0"},
        {"--uri", "http://h", "--view", "ns.v", "--src-version"},
        {"--uri", "http://h", "--view", "ns.v", "--header", "novalue"},
        {"--uri", "http://h", "--view", "ns.v", "--token", "t", "--oauth2-credential", "a:b"},
        {"--uri", "http://h", "--view", "ns.v", "--oauth2-scope", "s"},
        {"--uri", "http://h", "--uri", "http://g", "--view", "ns.v"},
        {"--uri", "ftp://h", "--view", "ns.v"},
        {"--uri", "http://h", "--view", "ns..v"},
        {"--uri", "http://h", "--view", "ns.v", "extra"},
        {"--uri", "http://h", "--view", "ns.v", "--force=yes"},
    };
    String[] messages = {
        "--uri is required (the Lance REST namespace server)",
        "--view is required (e.g. --view ns.my_view)",
        "--view 'v' must name the namespace and the view, e.g. ns.v",
        "Unknown option --colour",
        "Refresh option concurrency must be a whole number, got 'many'",
        "Refresh option concurrency must be at least 1, got 0",
        "--src-version needs a value",
        "--header must be NAME=VALUE, got 'novalue'",
        "--token and --oauth2-credential both set the bearer token; give one",
        "--oauth2-token-uri and --oauth2-scope need --oauth2-credential",
        "--uri is given twice",
        "Option 'uri' must be an http:// or https:// URL, got 'ftp://h'",
        "--view 'ns..v' has an empty name part",
        "Unexpected argument 'extra'; options start with --",
        "--force takes no value",
    };
    for (int i = 0; i < cases.length; i++) {
      err.reset();
      assertEquals(2, run(cases[i]), String.join(" ", cases[i]));
      assertEquals("refresh-job: " + messages[i] + "\nRun with --help for the options.\n",
          err(), String.join(" ", cases[i]));
    }
    assertTrue(seen.isEmpty(), "no refresh ran");
  }

  @Test
  void notFoundExitsThreeFailureOneAndSecretsStayOut() {
    assertEquals(3, run(a -> {
      throw new MaterializedViewNotFoundException("View ns.v does not exist");
    }, "--uri", "http://h", "--view", "ns.v", "--token", "sekrit"));
    assertEquals("refresh-job: not found: View ns.v does not exist\n", err());
    err.reset();
    assertEquals(3, run(a -> {
      throw new TableNotFoundException(new ErrorDetails("table not found", null,
          ErrorCode.TABLE_NOT_FOUND, 404, null, "ns$src", null, null));
    }, "--uri", "http://h", "--view", "ns.v"));
    assertTrue(err().startsWith("refresh-job: not found: 'ns$src': table not found"), err());
    err.reset();
    assertEquals(1, run(a -> {
      throw new IllegalStateException("disk full");
    }, "--uri", "http://h", "--view", "ns.v", "--token", "sekrit"));
    assertEquals("refresh-job: failed: IllegalStateException: disk full\n", err());
    assertEquals(1, run(a -> new RefreshResult("j", RefreshResult.JobStatus.FAILED,
        MaterializedViewKind.UDTF, null, 0, 0, 0, 1), "--uri", "http://h", "--view", "ns.v"));
    assertFalse(out().contains("sekrit") || err().contains("sekrit"));
    assertNull(seen.get(0).options().srcVersion());
  }
}
