package io.lancerest.spark.mv.sql;

import io.lancerest.client.LanceJson;
import io.lancerest.client.RestClientConfig;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.client.model.CreateMaterializedViewRequest;
import io.lancerest.spark.mv.cli.ConnectionFlags;
import io.lancerest.spark.mv.cli.MainSessions;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.RefreshJob;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.sql.SparkSession;

/**
 * {@code PrintCreateRequest --uri URL --sql "CREATE MATERIALIZED VIEW ..."}: prints, on one
 * line, the CreateMaterializedView body that statement sends to a server managing views, with
 * {@code source_query} and {@code output_schema} derived as CREATE derives them. Nothing is
 * created; the source table must exist on the server at {@code --uri}. For scripts that create
 * views over HTTP ({@code curl -d @body.json}).
 */
public final class PrintCreateRequest {
  /** The catalog the statement's names resolve in (also the current catalog). */
  public static final String CATALOG = "lance";

  static final String USAGE_TEXT = """
      Usage: PrintCreateRequest --uri URL --sql "CREATE MATERIALIZED VIEW ns.v ... AS SELECT ... FROM ns.t" [options]

      Prints the CreateMaterializedView request body (JSON, one line) of the statement:
      source_query and output_schema derived from the SELECT as CREATE derives them. Nothing is
      created. Names resolve in catalog 'lance' (the current catalog): ns.t or lance.ns.t.

      Server:
        --uri URL                      Lance REST namespace server holding the source (required)
        --sql STATEMENT                one CREATE MATERIALIZED VIEW statement (required)
      """ + ConnectionFlags.USAGE + """
        --help                         this text
      Exit codes: 0 printed, 1 failed, 2 bad usage, 3 source or namespace not found.
      """;

  private PrintCreateRequest() {}

  public static void main(String[] argv) {
    System.exit(run(argv, System.out, System.err,
        () -> MainSessions.builder("lance-mv-print-create-request").getOrCreate()));
  }

  /** Prints the request and returns the exit code; never calls System.exit. */
  public static int run(String[] argv, PrintStream out, PrintStream err,
      Supplier<SparkSession> sessions) {
    if (List.of(argv).contains("--help") || List.of(argv).contains("-h")) {
      out.print(USAGE_TEXT);
      return RefreshJob.DONE;
    }
    Map<String, String> catalog = new LinkedHashMap<>();
    String sql;
    try {
      sql = parse(argv, catalog);
      RestClientConfig.fromProperties(catalog);
    } catch (IllegalArgumentException e) { // ClientConfigException too
      err.println("print-create-request: " + e.getMessage());
      err.println("Run with --help for the options.");
      return RefreshJob.USAGE;
    }
    try {
      SparkSession spark = sessions.get();
      String prefix = "spark.sql.catalog." + CATALOG;
      spark.conf().set(prefix, "io.lancerest.spark.catalog.LanceRestCatalog");
      catalog.forEach((k, v) -> spark.conf().set(prefix + "." + k, v));
      spark.catalog().setCurrentCatalog(CATALOG);
      MaterializedViewStatements.CreateStatement c =
          MaterializedViewStatements.parseCreate(spark, sql);
      CreateMaterializedViewRequest body = MaterializedViews.forCatalog(spark, c.catalog())
          .createRequest(c.request());
      out.println(LanceJson.mapper().writeValueAsString(body));
      return RefreshJob.DONE;
    } catch (MaterializedViewNotFoundException | NotFoundException e) {
      err.println("print-create-request: not found: " + e.getMessage());
      return RefreshJob.NOT_FOUND;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (RuntimeException e) {
      err.println("print-create-request: failed: " + e.getClass().getSimpleName() + ": "
          + e.getMessage());
      return RefreshJob.FAILED;
    }
  }

  /** The statement; connection flags go to {@code catalog}. */
  private static String parse(String[] argv, Map<String, String> catalog) {
    String sql = null;
    for (int i = 0; i < argv.length; i++) {
      String name = argv[i];
      if (!name.startsWith("--")) {
        throw new IllegalArgumentException("Unexpected argument '" + name + "'; options start "
            + "with -- (quote the statement: --sql \"CREATE ...\")");
      }
      name = name.substring(2);
      String value;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      } else if (i + 1 < argv.length) {
        value = argv[++i];
      } else {
        throw new IllegalArgumentException("--" + name + " needs a value");
      }
      switch (name) {
        case "uri" -> {
          if (catalog.putIfAbsent(RestClientConfig.URI, value) != null) {
            throw new IllegalArgumentException("--uri is given twice");
          }
        }
        case "sql" -> {
          if (sql != null) {
            throw new IllegalArgumentException("--sql is given twice");
          }
          sql = value;
        }
        default -> {
          if (!ConnectionFlags.apply(name, value, catalog)) {
            throw new IllegalArgumentException("Unknown option --" + name);
          }
        }
      }
    }
    if (!catalog.containsKey(RestClientConfig.URI)) {
      throw new IllegalArgumentException("--uri is required (the Lance REST namespace server "
          + "holding the source table)");
    }
    if (sql == null || sql.isBlank()) {
      throw new IllegalArgumentException("--sql is required (e.g. --sql \"CREATE MATERIALIZED "
          + "VIEW shop.recent AS SELECT id FROM shop.orders WHERE id > 1\")");
    }
    ConnectionFlags.checkCombination(catalog);
    return sql;
  }
}
