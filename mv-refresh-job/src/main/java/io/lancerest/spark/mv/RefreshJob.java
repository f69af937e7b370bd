package io.lancerest.spark.mv;

import io.lancerest.client.RestClientConfig;
import io.lancerest.client.error.ClientConfigException;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.spark.connector.ManagedVersioningException;
import io.lancerest.spark.mv.cli.ConnectionFlags;
import io.lancerest.spark.mv.cli.MainSessions;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.error.VersionManagedTableException;
import io.lancerest.spark.mv.result.RefreshResult;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * {@code spark-submit --class io.lancerest.spark.mv.RefreshJob <jar> --uri … --view ns.v}:
 * refreshes one materialized view through the same {@link MaterializedViews} API as SQL
 * {@code REFRESH MATERIALIZED VIEW}. Exit codes: 0 done, 1 failed, 2 bad usage or configuration
 * (also a table whose versions the server manages), 3 view or source not found.
 */
public final class RefreshJob {
  public static final int DONE = 0;
  public static final int FAILED = 1;
  public static final int USAGE = 2;
  public static final int NOT_FOUND = 3;

  /** The catalog name the job registers for the server it refreshes against. */
  public static final String CATALOG = "lance_refresh_job";

  static final String USAGE_TEXT = """
      Usage: spark-submit --class io.lancerest.spark.mv.RefreshJob <jar> --uri URL --view NS.VIEW [options]

      Refreshes one materialized view (the same engine as REFRESH MATERIALIZED VIEW).

      Server:
        --uri URL                      Lance REST namespace server (required)
        --view NS.VIEW                 view identifier, parts separated by '.', `quote` parts with dots (required)
      """ + ConnectionFlags.USAGE + """
      Refresh (fields of RefreshMaterializedViewRequest):
        --src-version N                source version to refresh to (default latest)
        --concurrency N                maximum parallel tasks
        --max-rows-per-fragment N      output fragment size bound
        --intra-applier-concurrency N  threads calling the function inside one task
        --source-task-size N           source rows per work item (chunker)
        --output-limit N               cap on view rows (chunker views only)
        --job-id ID                    job id to record (default generated)
        --force                        rebuild even when the source did not change
        --help                         this text
      Exit codes: 0 done, 1 failed, 2 bad usage or configuration, 3 view or source not found.
      """;

  /** Parsed command line. */
  public record Args(Map<String, String> catalogOptions, List<String> viewId,
      RefreshOptions options) {
    /** No secret values: safe for logs. */
    @Override
    public String toString() {
      Map<String, String> safe = new LinkedHashMap<>();
      catalogOptions.forEach((k, v) -> safe.put(k, isSecret(k) ? "****" : v));
      return "Args[catalogOptions=" + safe + ", viewId=" + viewId + ", options=" + options + "]";
    }

    private static boolean isSecret(String k) {
      return ConnectionFlags.isSecret(k);
    }
  }

  /** What performs the refresh (a Spark job by default; tests substitute one). */
  @FunctionalInterface
  public interface Runner {
    RefreshResult refresh(Args args);
  }

  /** Bad command line; the message says which flag and why. */
  static final class UsageException extends RuntimeException {
    UsageException(String message) {
      super(message);
    }
  }

  private RefreshJob() {}

  public static void main(String[] argv) {
    System.exit(run(argv, System.out, System.err, RefreshJob::runInSpark));
  }

  /** Runs the job and returns its exit code; never calls System.exit. */
  public static int run(String[] argv, PrintStream out, PrintStream err, Runner runner) {
    Args args;
    try {
      if (List.of(argv).contains("--help") || List.of(argv).contains("-h")) {
        out.print(USAGE_TEXT);
        return DONE;
      }
      args = parse(argv);
      RestClientConfig.fromProperties(args.catalogOptions()); // validate uri, auth combination
    } catch (UsageException | ClientConfigException | InvalidOptionException e) {
      err.println("refresh-job: " + e.getMessage());
      err.println("Run with --help for the options.");
      return USAGE;
    }
    try {
      RefreshResult r = runner.refresh(args);
      out.println("refresh-job: view " + String.join(".", args.viewId()) + " job " + r.jobId()
          + " " + r.status() + " kind=" + r.kind().wire() + " source_version="
          + r.sourceVersion() + " rows_inserted=" + r.rowsInserted() + " rows_deleted="
          + r.rowsDeleted() + " skipped=" + r.skipped() + " duration_ms=" + r.durationMs());
      return r.status() == RefreshResult.JobStatus.FAILED ? FAILED : DONE;
    } catch (MaterializedViewNotFoundException | NotFoundException e) {
      err.println("refresh-job: not found: " + e.getMessage());
      return NOT_FOUND;
    } catch (VersionManagedTableException | ManagedVersioningException e) {
      // a configuration error: a rerun is refused the same way until the tables move
      err.println("refresh-job: refused: " + e.getMessage());
      return USAGE;
    } catch (RuntimeException e) {
      err.println("refresh-job: failed: " + e.getClass().getSimpleName() + ": " + e.getMessage());
      return FAILED;
    }
  }

  static Args parse(String[] argv) {
    Map<String, String> catalog = new LinkedHashMap<>();
    Map<String, String> refresh = new LinkedHashMap<>();
    String view = null;
    for (int i = 0; i < argv.length; i++) {
      String a = argv[i];
      if (!a.startsWith("--")) {
        throw new UsageException("Unexpected argument '" + a + "'; options start with --");
      }
      String name = a.substring(2);
      String value = null;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      }
      if (name.equals("force")) {
        if (value != null) {
          throw new UsageException("--force takes no value");
        }
        refresh.put("force", "true");
        continue;
      }
      if (value == null) {
        if (i + 1 >= argv.length || argv[i + 1].startsWith("--")) {
          throw new UsageException("--" + name + " needs a value");
        }
        value = argv[++i];
      }
      switch (name) {
        case "uri" -> once(catalog, RestClientConfig.URI, name, value);
        case "view" -> {
          if (view != null) {
            throw new UsageException("--view is given twice");
          }
          view = value;
        }
        case "src-version", "concurrency", "max-rows-per-fragment", "intra-applier-concurrency",
            "source-task-size", "output-limit", "job-id" ->
            once(refresh, name.replace('-', '_'), name, value);
        default -> {
          try {
            if (!ConnectionFlags.apply(name, value, catalog)) {
              throw new UsageException("Unknown option --" + name);
            }
          } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
          }
        }
      }
    }
    if (!catalog.containsKey(RestClientConfig.URI)) {
      throw new UsageException("--uri is required (the Lance REST namespace server)");
    }
    if (view == null) {
      throw new UsageException("--view is required (e.g. --view ns.my_view)");
    }
    try {
      ConnectionFlags.checkCombination(catalog);
    } catch (IllegalArgumentException e) {
      throw new UsageException(e.getMessage());
    }
    return new Args(catalog, splitView(view), RefreshOptions.fromMap(refresh));
  }

  private static void once(Map<String, String> m, String key, String flag, String value) {
    if (m.putIfAbsent(key, value) != null) {
      throw new UsageException("--" + flag + " is given twice");
    }
  }

  /** {@code ns.v}, {@code a.b.v}, {@code ns.`v.with.dots`}. */
  static List<String> splitView(String view) {
    List<String> parts = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    boolean quoted = false;
    boolean hadQuote = false;
    for (int i = 0; i < view.length(); i++) {
      char c = view.charAt(i);
      if (c == '`') {
        if (quoted && i + 1 < view.length() && view.charAt(i + 1) == '`') {
          cur.append('`');
          i++;
        } else {
          quoted = !quoted;
          hadQuote = true;
        }
      } else if (c == '.' && !quoted) {
        addPart(parts, cur, hadQuote, view);
        cur.setLength(0);
        hadQuote = false;
      } else {
        cur.append(c);
      }
    }
    if (quoted) {
      throw new UsageException("--view '" + view + "' has an unclosed `quote`");
    }
    addPart(parts, cur, hadQuote, view);
    if (parts.size() < 2) {
      throw new UsageException("--view '" + view + "' must name the namespace and the view, "
          + "e.g. ns." + view);
    }
    return parts;
  }

  private static void addPart(List<String> parts, StringBuilder cur, boolean quoted,
      String view) {
    if (cur.length() == 0 && !quoted) {
      throw new UsageException("--view '" + view + "' has an empty name part");
    }
    parts.add(cur.toString());
  }

  /** The default runner: a Spark session with the project's catalog, then the one engine. */
  static RefreshResult runInSpark(Args args) {
    SparkSession spark = MainSessions.builder("lance-mv-refresh "
        + String.join(".", args.viewId())).getOrCreate();
    String prefix = "spark.sql.catalog." + CATALOG;
    spark.conf().set(prefix, "io.lancerest.spark.catalog.LanceRestCatalog");
    args.catalogOptions().forEach((k, v) -> spark.conf().set(prefix + "." + k, v));
    // The engine names the view the same way in the jobs it starts.
    spark.sparkContext().setJobDescription("REFRESH MATERIALIZED VIEW " + CATALOG + "."
        + String.join(".", args.viewId())
        + (args.options().jobId() == null ? "" : " (job " + args.options().jobId() + ")"));
    return MaterializedViews.forCatalog(spark, CATALOG).refresh(args.viewId(), args.options());
  }
}
