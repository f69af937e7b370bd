package io.lancerest.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A Spark standalone cluster on 127.0.0.1 for tests: a {@code Master} and {@code workers}
 * {@code Worker}s, each a child JVM of the test JVM, started from the test class path. The
 * Worker launches executors as JVMs of its own (as in production), which {@link #executors()}
 * finds among its child processes and a test may kill ({@link #kill}).
 *
 * <p>What Spark needs for it: a temporary SPARK_HOME whose {@code jars/} links every jar of the
 * test class path (the Worker builds each executor's class path from it), {@code
 * SPARK_SCALA_VERSION} and {@code SPARK_LOCAL_IP}, a log4j2 configuration at INFO (the
 * readiness lines this class waits for are INFO), the Java 17 {@code --add-opens} flags for the
 * daemons and the executors, and {@code spark.executor.extraClassPath} with the lance jars (the
 * list in docs/packaging.md) ahead of everything else, then the build's class directories
 * (which {@code jars/*} cannot hold). {@link #appConf()} has the application settings.
 *
 * <p>Every wait is bounded ({@link #WAIT}); the first failure names what did not start, with
 * the tail of its log. {@link #close()} kills every child JVM (and their children, the
 * executors); a JVM shutdown hook does the same if a test never gets there.
 */
public final class StandaloneCluster implements AutoCloseable {
  public static final Duration WAIT = Duration.ofSeconds(60);
  private static final Pattern MASTER_URL = Pattern.compile(
      "Starting Spark master at (spark://[0-9.]+:[0-9]+)");

  /** An executor JVM: its process, application and executor id. */
  public record Executor(long pid, String appId, String executorId) {}

  private final Path home;
  private final List<Daemon> daemons = new ArrayList<>();
  private final List<Path> workDirs = new ArrayList<>();
  private final List<String> opens;
  private final String executorClassPath;
  private final Thread hook;
  private String masterUrl;

  private record Daemon(String what, Process process, Path log) {}

  private StandaloneCluster(Path home, List<Path> sparkJars) {
    this.home = home;
    this.opens = ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(a -> a.startsWith("--add-opens") || a.startsWith("--add-exports")
            || a.startsWith("-Djdk.reflect") || a.startsWith("-Dio.netty"))
        .toList();
    this.executorClassPath = sparkJars == null ? layOutHome(home) : linkOnly(home, sparkJars);
    this.hook = new Thread(this::killAll, "standalone-cluster-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /**
   * Starts a Master and {@code workers} Workers of {@code cores} cores and {@code memory} (e.g.
   * "1g") each, and waits until every Worker has registered.
   */
  public static StandaloneCluster start(int workers, int cores, String memory) {
    return start(workers, cores, memory, null);
  }

  /**
   * {@link #start(int, int, String)} on a SPARK_HOME whose {@code jars/} holds only
   * {@code sparkJars}, as a Spark install has: applications bring everything else themselves
   * ({@code --jars}, {@code spark.executor.extraClassPath}), and {@link #appConf} sets no
   * executor class path.
   */
  public static StandaloneCluster withJars(int workers, int cores, String memory,
      List<Path> sparkJars) {
    return start(workers, cores, memory, List.copyOf(sparkJars));
  }

  private static StandaloneCluster start(int workers, int cores, String memory,
      List<Path> sparkJars) {
    Path home;
    try {
      home = Files.createTempDirectory("spark-standalone");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    StandaloneCluster c;
    try {
      c = new StandaloneCluster(home, sparkJars);
    } catch (RuntimeException | Error e) {
      deleteQuietly(home);
      throw e;
    }
    try {
      Daemon master = c.launch("Spark Master", "master", List.of(
          "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", "0",
          "--webui-port", "0"));
      String line = c.awaitLine(master, MASTER_URL, "the master URL line");
      Matcher m = MASTER_URL.matcher(line);
      m.find();
      c.masterUrl = m.group(1);
      c.awaitLine(master, Pattern.compile("I have been elected leader"), "leadership");
      for (int i = 0; i < workers; i++) {
        Path work = Files.createDirectories(home.resolve("work-" + i));
        c.workDirs.add(work);
        Daemon w = c.launch("Spark Worker " + i, "worker-" + i, List.of(
            "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port", "0",
            "--webui-port", "0", "--cores", String.valueOf(cores), "--memory", memory,
            "--work-dir", work.toString(), c.masterUrl));
        c.awaitLine(w, Pattern.compile("Successfully registered with master"),
            "registration with " + c.masterUrl);
      }
      return c;
    } catch (IOException e) {
      c.close();
      throw new UncheckedIOException(e);
    } catch (RuntimeException | Error e) {
      c.close();
      throw e;
    }
  }

  /** {@code spark://127.0.0.1:<port>}. */
  public String masterUrl() {
    return masterUrl;
  }

  /**
   * The settings of an application on this cluster: the driver on 127.0.0.1, executors of
   * {@code executorCores} cores and {@code executorMemory}, their class path (lance jars first)
   * and Java flags ({@code --add-opens} and {@code extraExecutorJavaOptions}).
   */
  public Map<String, String> appConf(int executorCores, String executorMemory,
      int maxCores, String extraExecutorJavaOptions) {
    Map<String, String> c = new LinkedHashMap<>();
    c.put("spark.master", masterUrl);
    c.put("spark.driver.host", "127.0.0.1");
    c.put("spark.driver.bindAddress", "127.0.0.1");
    c.put("spark.executor.cores", String.valueOf(executorCores));
    c.put("spark.executor.memory", executorMemory);
    c.put("spark.cores.max", String.valueOf(maxCores));
    if (!executorClassPath.isEmpty()) {
      c.put("spark.executor.extraClassPath", executorClassPath);
    }
    c.put("spark.executor.extraJavaOptions", (String.join(" ", opens) + " "
        + extraExecutorJavaOptions).trim());
    c.put("spark.ui.enabled", "false");
    return c;
  }

  /** The {@code stderr} of every executor the Workers ran so far, alive or ended. */
  public String executorLogs() {
    StringBuilder b = new StringBuilder();
    for (Path w : workDirs) {
      try (Stream<Path> files = Files.walk(w)) {
        for (Path f : files.filter(f -> f.getFileName().toString().equals("stderr")).toList()) {
          b.append("== ").append(f).append('\n').append(Files.readString(f,
              StandardCharsets.UTF_8));
        }
      } catch (IOException e) {
        b.append("(cannot read ").append(w).append(": ").append(e).append(")\n");
      }
    }
    return b.toString();
  }

  /** The executor JVMs now alive: child processes of the Workers. */
  public List<Executor> executors() {
    List<Executor> out = new ArrayList<>();
    for (Daemon d : daemons) {
      d.process().descendants().filter(ProcessHandle::isAlive).forEach(p -> {
        List<String> args = arguments(p);
        if (args.contains("org.apache.spark.executor.CoarseGrainedExecutorBackend")) {
          out.add(new Executor(p.pid(), after(args, "--app-id"), after(args, "--executor-id")));
        }
      });
    }
    return out;
  }

  /** Waits until {@code n} executor JVMs run, and returns them. */
  public List<Executor> awaitExecutors(int n) {
    await(() -> executors().size() >= n, n + " executor JVM(s) of the Worker(s)");
    return executors();
  }

  /**
   * Kills executor JVM {@code pid} (SIGKILL, as a lost machine) and waits until it is gone.
   *
   * @throws AssertionError if {@code pid} is no executor of this cluster
   */
  public void kill(long pid) {
    if (executors().stream().noneMatch(e -> e.pid() == pid)) {
      throw new AssertionError("process " + pid + " is no executor of this cluster: "
          + executors());
    }
    ProcessHandle p = ProcessHandle.of(pid).orElseThrow();
    p.destroyForcibly();
    await(() -> !p.isAlive(), "the end of killed executor JVM " + pid);
  }

  /** The end of an executor's stderr (its log), for failure messages. */
  public String executorLog(Executor e) {
    for (Path w : workDirs) {
      Path f = w.resolve(e.appId()).resolve(e.executorId()).resolve("stderr");
      if (Files.exists(f)) {
        return tail(f, 40);
      }
    }
    return "(no log of executor " + e + ")";
  }

  /** The end of every daemon's log. */
  public String logs() {
    StringBuilder sb = new StringBuilder();
    for (Daemon d : daemons) {
      sb.append("--- ").append(d.what()).append(" (").append(d.log()).append(")\n")
          .append(tail(d.log(), 30));
    }
    return sb.toString();
  }

  @Override
  public void close() {
    try {
      killAll();
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // the hook runs anyway
      }
      deleteQuietly(home);
    }
  }

  private void killAll() {
    for (Daemon d : daemons) {
      d.process().descendants().forEach(ProcessHandle::destroyForcibly);
      d.process().destroyForcibly();
    }
    for (Daemon d : daemons) {
      try {
        d.process().waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** A SPARK_HOME of {@code jars} and the daemons' log4j2 configuration; no executor path. */
  private static String linkOnly(Path home, List<Path> jars) {
    try {
      Path dir = writeConf(home);
      int i = 0;
      for (Path p : jars) {
        Files.createSymbolicLink(dir.resolve(String.format("%03d-%s", i++, p.getFileName())),
            p.toAbsolutePath());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return "";
  }

  /** Writes {@code conf/log4j2.properties} (INFO: the readiness lines); returns {@code jars/}. */
  private static Path writeConf(Path home) throws IOException {
    Path jars = Files.createDirectories(home.resolve("jars"));
    Path conf = Files.createDirectories(home.resolve("conf"));
    Files.writeString(conf.resolve("log4j2.properties"), String.join("\n",
        "rootLogger.level = info",
        "rootLogger.appenderRef.stdout.ref = console",
        "appender.console.type = Console",
        "appender.console.name = console",
        "appender.console.target = SYSTEM_ERR",
        "appender.console.layout.type = PatternLayout",
        "appender.console.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1}: %m%n%ex", ""));
    return jars;
  }

  /**
   * SPARK_HOME: {@code jars/} links every jar of the test class path, {@code conf/} has the
   * daemons' log4j2 configuration. Returns the executors' extra class path: the lance jars of
   * docs/packaging.md, then the class path's directories.
   */
  private static String layOutHome(Path home) {
    List<String> cp = List.of(System.getProperty("java.class.path").split(File.pathSeparator));
    List<String> lanceCoordinates = lanceJars();
    List<String> lance = new ArrayList<>();
    List<String> dirs = new ArrayList<>();
    try {
      Path jars = writeConf(home);
      int i = 0;
      for (String entry : cp) {
        Path p = Path.of(entry).toAbsolutePath();
        if (Files.isDirectory(p)) {
          dirs.add(p.toString());
        } else if (entry.endsWith(".jar") && Files.exists(p)) {
          Files.createSymbolicLink(jars.resolve(String.format("%03d-%s", i++, p.getFileName())),
              p);
          String unix = p.toString().replace(File.separatorChar, '/');
          if (lanceCoordinates.stream().anyMatch(unix::contains)) {
            lance.add(p.toString());
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (lance.size() != lanceCoordinates.size()) {
      throw new IllegalStateException("Found " + lance.size() + " of the "
          + lanceCoordinates.size() + " lance jars of docs/packaging.md on the test class path: "
          + lance);
    }
    List<String> all = new ArrayList<>(lance);
    all.addAll(dirs);
    return String.join(File.pathSeparator, all);
  }

  /**
   * The lance jars of docs/packaging.md (the list between its lance-jars markers), as the
   * {@code group/path/artifact/version/} part of their Maven repository path.
   */
  static List<String> lanceJars() {
    Path doc = Path.of("..", "docs", "packaging.md");
    try {
      String text = Files.readString(doc, StandardCharsets.UTF_8);
      // the markers on lines of their own (the doc's sed command names them too)
      String start = "\n<!-- lance-jars -->\n";
      String list = text.substring(text.indexOf(start) + start.length(),
          text.indexOf("\n<!-- /lance-jars -->"));
      return list.lines().map(String::trim).filter(l -> !l.isEmpty()).map(l -> {
        String[] g = l.split(":");
        return "/" + g[0].replace('.', '/') + "/" + g[1] + "/" + g[2] + "/";
      }).toList();
    } catch (IOException | IndexOutOfBoundsException e) {
      throw new IllegalStateException("Cannot read the lance jars from " + doc.toAbsolutePath()
          + " (tests run from the module folder)", e);
    }
  }

  private Daemon launch(String what, String name, List<String> mainAndArgs) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(opens);
    cmd.addAll(List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-Dlog4j2.configurationFile=" + home.resolve("conf/log4j2.properties").toUri()));
    cmd.add("-cp");
    cmd.add(home.resolve("conf") + File.pathSeparator + home.resolve("jars") + File.separator
        + "*");
    cmd.addAll(mainAndArgs);
    Path log = home.resolve(name + ".log");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(log.toFile());
    Map<String, String> env = pb.environment();
    env.put("SPARK_HOME", home.toString());
    env.put("SPARK_SCALA_VERSION", "2.12");
    env.put("SPARK_LOCAL_IP", "127.0.0.1");
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.remove("SPARK_CONF_DIR");
    Daemon d = new Daemon(what, pb.start(), log);
    daemons.add(d);
    return d;
  }

  private String awaitLine(Daemon d, Pattern p, String what) {
    String[] found = new String[1];
    await(() -> {
      if (!d.process().isAlive()) {
        throw new AssertionError(d.what() + " exited (" + d.process().exitValue()
            + ") before " + what + "; the end of its log " + d.log() + ":\n" + tail(d.log(), 40));
      }
      found[0] = lines(d.log()).filter(l -> p.matcher(l).find()).findFirst().orElse(null);
      return found[0] != null;
    }, d.what() + ": " + what + " (line /" + p + "/ in " + d.log() + "); the end of its log:\n"
        + "%s", () -> tail(d.log(), 40));
    return found[0];
  }

  private static void await(BooleanSupplier done, String what) {
    await(done, what, () -> "");
  }

  private static void await(BooleanSupplier done, String what,
      java.util.function.Supplier<String> detail) {
    long end = System.nanoTime() + WAIT.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("Within " + WAIT.toSeconds() + " s, no "
            + String.format(what.contains("%s") ? what : what + "%s", detail.get()));
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for " + what);
      }
    }
  }

  /**
   * A process's command line: from {@code /proc/<pid>/cmdline} on Linux, since {@code
   * ProcessHandle.Info} cuts long ones (an executor's class path is long), else from Info.
   */
  private static List<String> arguments(ProcessHandle p) {
    Path proc = Path.of("/proc", String.valueOf(p.pid()), "cmdline");
    try {
      if (Files.exists(proc)) {
        String all = new String(Files.readAllBytes(proc), StandardCharsets.UTF_8);
        return List.of(all.split("\0"));
      }
    } catch (IOException e) {
      // the process ended
    }
    return List.of(p.info().arguments().orElse(new String[0]));
  }

  private static String after(List<String> args, String flag) {
    int i = args.indexOf(flag);
    return i >= 0 && i + 1 < args.size() ? args.get(i + 1) : "?";
  }

  private static Stream<String> lines(Path f) {
    try {
      return Files.exists(f) ? Files.readAllLines(f, StandardCharsets.UTF_8).stream()
          : Stream.empty();
    } catch (IOException | UncheckedIOException e) {
      return Stream.empty();
    }
  }

  private static String tail(Path f, int n) {
    List<String> all = lines(f).toList();
    return String.join("\n", all.subList(Math.max(0, all.size() - n), all.size())) + "\n";
  }

  private static void deleteQuietly(Path dir) {
    try (Stream<Path> all = Files.walk(dir)) {
      all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException | UncheckedIOException e) {
      // a leftover temporary folder is no failure
    }
  }

  /** An executor among {@link #executors()} with this pid, if any. */
  public Optional<Executor> executor(long pid) {
    return executors().stream().filter(e -> e.pid() == pid).findFirst();
  }
}
