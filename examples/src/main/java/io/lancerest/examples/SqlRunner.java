package io.lancerest.examples;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.SparkThrowable;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.StructField;
import org.lance.namespace.RestAdapter;

/**
 * A SQL prompt without a Spark distribution: runs statements through catalog {@code lance}
 * (configured from {@code examples/conf/spark-defaults.conf} by {@link ExampleSpark}, so
 * {@code lance} is the default catalog and the materialized-view statements work) against the
 * embedded default, lance-core's dir server on a local folder, or any server given with
 * {@code --uri}, and prints each result as a table. See {@link #USAGE}.
 */
public final class SqlRunner {
  static final int DEFAULT_MAX_ROWS = 1000;
  private static final int STATEMENT_CHARS_IN_ERRORS = 100;

  static final String USAGE = """
      Usage: SqlRunner [options] [--file FILE | -e SQL]
      Runs SQL through catalog 'lance' (the default catalog, with the materialized-view
      statements) and prints every result as a table. Statements come from FILE, from -e, or
      else from standard input; each ends with ';' and may span lines; -- starts a comment.
        --uri URL          Lance REST namespace server (default: start lance-core's dir server
                           on --warehouse, in this JVM)
        --warehouse DIR    folder of that embedded server (default ./warehouse; kept between
                           runs, the DevServer's default folder too)
        --token T          bearer token for --uri; give it as env:VAR or file:/path (never printed)
        --api-key K        x-api-key for --uri, same forms
        --header K=V       extra HTTP header; repeatable
        --conf K=V         a Spark setting, e.g. spark.sql.catalog.lance.<option>; repeatable
        --file FILE, -f    read statements from FILE
        -e SQL             run the statements in SQL
        --max-rows N       rows printed per result (default 1000; a line says when more were cut)
      Paths are relative to the directory you ran the command in.
      A failed statement prints one line on standard error:
        ERROR at <input>:<line> in "<statement>": <message>
      From a file or -e the run stops there; from standard input it goes on with the next
      statement. Exit code: 0 if every statement succeeded, 1 if one failed, 2 for a bad
      command line or an unreadable file.""";

  private final SparkSession spark;
  private final PrintStream out;
  private final PrintStream err;
  private final int maxRows;

  SqlRunner(SparkSession spark, PrintStream out, PrintStream err, int maxRows) {
    this.spark = spark;
    this.out = out;
    this.err = err;
    this.maxRows = maxRows;
  }

  /** The command line. {@code settings}: Spark settings for the session, in order. */
  record Options(String uri, String warehouse, String file, String sql,
      Map<String, String> settings, int maxRows, boolean help) {
    static Options parse(String[] args) {
      String uri = null;
      String warehouse = null;
      String file = null;
      String sql = null;
      int maxRows = DEFAULT_MAX_ROWS;
      Map<String, String> settings = new LinkedHashMap<>();
      String catalog = "spark.sql.catalog.lance.";
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        if (a.equals("--help") || a.equals("-h")) {
          return new Options(null, null, null, null, Map.of(), maxRows, true);
        }
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("missing value for " + a);
        }
        String v = args[++i];
        switch (a) {
          case "--uri" -> uri = v;
          case "--warehouse" -> warehouse = v;
          case "--token" -> settings.put(catalog + "token", secretReference(a, v));
          case "--api-key" -> settings.put(catalog + "api_key", secretReference(a, v));
          case "--header" -> {
            String[] kv = keyValue(a, v);
            settings.put(catalog + "header." + kv[0], kv[1]);
          }
          case "--conf" -> {
            String[] kv = keyValue(a, v);
            settings.put(kv[0], kv[1]);
          }
          case "--file", "-f" -> file = v;
          case "-e" -> sql = v;
          case "--max-rows" -> maxRows = positive(a, v);
          default -> throw new IllegalArgumentException("unknown option " + a);
        }
      }
      if (file != null && sql != null) {
        throw new IllegalArgumentException("give --file or -e, not both");
      }
      if (uri != null && warehouse != null) {
        throw new IllegalArgumentException("--warehouse is the embedded server's folder; "
            + "with --uri the server has its own");
      }
      return new Options(uri, warehouse == null ? "warehouse" : warehouse, file, sql,
          Map.copyOf(settings), maxRows, false);
    }

    /**
   * A secret given by reference: {@code env:VAR} or {@code file:PATH} (a relative path taken from
   * the caller's directory). The secret itself is refused: on a command line it would show in
   * {@code ps} and the shell's history.
   */
  static String secretReference(String flag, String v) {
    if (v.startsWith("env:")) {
      return v;
    }
    if (v.startsWith("file:")) {
      return "file:" + CallerPaths.resolve(v.substring("file:".length()));
    }
    throw new IllegalArgumentException(flag + " takes env:VAR or file:PATH, not the secret "
        + "itself (a command line shows in ps and the shell history)");
  }

  private static String[] keyValue(String option, String v) {
      int eq = v.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(option + " takes KEY=VALUE, got '" + v + "'");
      }
      return new String[] {v.substring(0, eq), v.substring(eq + 1)};
    }

    private static int positive(String option, String v) {
      try {
        int n = Integer.parseInt(v);
        if (n > 0) {
          return n;
        }
      } catch (NumberFormatException e) {
        // below
      }
      throw new IllegalArgumentException(option + " takes a positive number, got '" + v + "'");
    }
  }

  /**
   * Where the statements come from: {@code name} is how errors refer to it; statements from
   * standard input keep going after an error, the others stop.
   */
  record Script(String name, BufferedReader reader, boolean fromStdin) implements Closeable {
    /** Opens {@code --file} (relative to {@code callerDir}), {@code -e}, or {@code stdin}. */
    static Script open(Options options, Path callerDir, InputStream stdin) throws IOException {
      if (options.file() != null) {
        Path path = CallerPaths.resolve(options.file(), callerDir);
        if (!Files.isRegularFile(path) || !Files.isReadable(path)) {
          throw new IOException("cannot read the file " + path + " (--file " + options.file()
              + ")");
        }
        return new Script(options.file(), Files.newBufferedReader(path), false);
      }
      if (options.sql() != null) {
        return new Script("-e", new BufferedReader(new StringReader(options.sql())), false);
      }
      return new Script("stdin",
          new BufferedReader(new InputStreamReader(stdin, StandardCharsets.UTF_8)), true);
    }

    @Override
    public void close() throws IOException {
      if (!fromStdin) {
        reader.close();
      }
    }
  }

  public static void main(String[] args) throws Exception {
    Options options = CommandLines.parseOrExit("SqlRunner", USAGE, () -> Options.parse(args),
        Options::help);
    if (options == null) {
      return;
    }
    Path callerDir = CallerPaths.callerDir();
    int exit;
    try (Script script = Script.open(options, callerDir, System.in)) {
      RestAdapter server = null;
      String uri = options.uri();
      if (uri == null) {
        Path warehouse = CallerPaths.resolve(options.warehouse(), callerDir);
        Files.createDirectories(warehouse);
        server = new RestAdapter("dir", Map.of("root", warehouse.toString()), "127.0.0.1", 0);
        server.start();
        uri = "http://127.0.0.1:" + server.getPort();
        System.err.println("SqlRunner: embedded lance-core REST server on " + uri
            + ", warehouse " + warehouse + " (kept between runs)");
      }
      System.err.println("SqlRunner: starting a local Spark session for catalog 'lance' on "
          + uri + " (10-30 s)...");
      SparkSession spark = ExampleSpark.session("lance-rest-sql", uri, options.settings());
      boolean interactive = script.fromStdin() && System.console() != null;
      if (interactive) {
        System.err.println("SqlRunner: type statements ending with ';' (quit; or Ctrl-D ends)");
      }
      try {
        exit = new SqlRunner(spark, System.out, System.err, options.maxRows())
            .run(script, interactive);
      } finally {
        spark.stop();
        if (server != null) {
          server.close();
        }
      }
    } catch (IOException e) {
      System.err.println("SqlRunner: " + e.getMessage());
      exit = 2;
    }
    System.exit(exit);
  }

  /**
   * Runs the script's statements in order, printing each (unless {@code interactive}: then the
   * user typed it, and a prompt is shown instead) and its result. Returns the exit code: 0 when
   * every statement succeeded, 1 otherwise.
   */
  int run(Script script, boolean interactive) throws IOException {
    SqlStatements statements = new SqlStatements(script.reader(), interactive ? out : null);
    int ran = 0;
    int failed = 0;
    for (SqlStatements.Statement s = statements.next(); s != null; s = statements.next()) {
      String text = s.text();
      if (text.equalsIgnoreCase("quit") || text.equalsIgnoreCase("exit")) {
        break;
      }
      if (!interactive) {
        out.println("sql> " + text.replace("\n", "\n   > "));
      }
      ran++;
      long start = System.nanoTime();
      try {
        Dataset<Row> result = spark.sql(text);
        if (result.schema().isEmpty()) {
          out.println("OK (" + seconds(start) + ")");
        } else {
          printTable(result, start);
        }
      } catch (Exception e) { // AnalysisException is a checked exception Java cannot name here
        failed++;
        out.flush();
        err.println("ERROR at " + script.name() + ":" + s.line() + " in \"" + shorten(text)
            + "\": " + oneLine(e));
        err.flush();
        if (!script.fromStdin()) {
          err.println("SqlRunner: stopped at the first error; the statements after "
              + script.name() + ":" + s.line() + " were not run");
          return 1;
        }
      }
      out.println();
    }
    if (failed > 0) {
      err.println("SqlRunner: " + failed + " of " + ran + " statements failed");
      return 1;
    }
    return 0;
  }

  /** The result as a table of all its columns, at most {@code maxRows} rows, nothing cut. */
  private void printTable(Dataset<Row> result, long start) {
    StructField[] fields = result.schema().fields();
    // Positional names, so that duplicate column names (SELECT 1 a, 2 a) are no problem.
    String[] positional = new String[fields.length];
    for (int i = 0; i < fields.length; i++) {
      positional[i] = "c" + i;
    }
    Dataset<Row> renamed = result.toDF(positional);
    Column[] asText = new Column[fields.length];
    for (int i = 0; i < fields.length; i++) {
      Column c = renamed.col(positional[i]);
      // Spark's own rendering of values as text, as Dataset.show uses (binary as hex).
      asText[i] = fields[i].dataType() instanceof BinaryType ? functions.hex(c) : c.cast("string");
    }
    List<Row> rows = renamed.select(asText).takeAsList(maxRows + 1);
    boolean more = rows.size() > maxRows;
    List<List<String>> cells = new ArrayList<>();
    for (Row r : rows.subList(0, Math.min(rows.size(), maxRows))) {
      List<String> line = new ArrayList<>();
      for (int i = 0; i < fields.length; i++) {
        line.add(r.isNullAt(i) ? "NULL" : escape(r.getString(i)));
      }
      cells.add(line);
    }
    List<String> header = new ArrayList<>();
    for (StructField f : fields) {
      header.add(escape(f.name()));
    }
    out.print(table(header, cells));
    String took = seconds(start);
    if (more) {
      out.println("(the first " + maxRows + " rows; there are more: --max-rows N shows more, "
          + took + ")");
    } else {
      out.println("(" + cells.size() + (cells.size() == 1 ? " row, " : " rows, ") + took + ")");
    }
  }

  /**
   * A Dataset.show-style table: a header row and the rows, left-aligned, none truncated, each
   * column at least 3 wide.
   */
  static String table(List<String> header, List<List<String>> rows) {
    int[] width = new int[header.size()];
    for (int i = 0; i < width.length; i++) {
      width[i] = Math.max(3, header.get(i).length());
      for (List<String> r : rows) {
        width[i] = Math.max(width[i], r.get(i).length());
      }
    }
    StringBuilder rule = new StringBuilder("+");
    for (int w : width) {
      rule.append("-".repeat(w)).append('+');
    }
    rule.append('\n');
    StringBuilder sb = new StringBuilder(rule);
    appendRow(sb, header, width);
    sb.append(rule);
    for (List<String> r : rows) {
      appendRow(sb, r, width);
    }
    return sb.append(rule).toString();
  }

  private static void appendRow(StringBuilder sb, List<String> cells, int[] width) {
    sb.append('|');
    for (int i = 0; i < width.length; i++) {
      String c = cells.get(i);
      sb.append(c).append(" ".repeat(width[i] - c.length())).append('|');
    }
    sb.append('\n');
  }

  /** Line breaks and tabs inside a value, written so that the table keeps its shape. */
  private static String escape(String value) {
    return value.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t");
  }

  /**
   * The error as one line: Spark's message without the logical plan, the SQL excerpt or stack
   * frames, prefixed with the exception's class when the message has no Spark error class.
   */
  static String oneLine(Throwable e) {
    String message = e instanceof AnalysisException a ? a.getSimpleMessage() : e.getMessage();
    if (message == null || message.isBlank()) {
      return e.getClass().getName();
    }
    for (String cut : List.of("\n== SQL", "\nDriver stacktrace:", "\n\tat ")) {
      int at = message.indexOf(cut);
      if (at >= 0) {
        message = message.substring(0, at);
      }
    }
    message = message.strip().replaceAll("\\s+", " ");
    boolean classified = e instanceof SparkThrowable t && t.getErrorClass() != null;
    return classified ? message : e.getClass().getSimpleName() + ": " + message;
  }

  private static String shorten(String statement) {
    String s = statement.replaceAll("\\s+", " ");
    return s.length() <= STATEMENT_CHARS_IN_ERRORS ? s
        : s.substring(0, STATEMENT_CHARS_IN_ERRORS - 1) + "…";
  }

  private static String seconds(long startNanos) {
    return String.format(Locale.ROOT, "%.1f s", (System.nanoTime() - startNanos) / 1e9);
  }
}
