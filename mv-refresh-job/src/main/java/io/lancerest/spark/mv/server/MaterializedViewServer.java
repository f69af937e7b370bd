package io.lancerest.spark.mv.server;

import io.lancerest.spark.catalog.LanceRestCatalog;
import io.lancerest.spark.mv.CreateViewRequest;
import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.cli.MainSessions;
import io.lancerest.spark.mv.engine.JobService;
import io.lancerest.spark.mv.engine.QueuedJobs;
import io.lancerest.spark.mv.error.RefreshCancelledException;
import io.lancerest.spark.mv.result.JobRecord;
import io.lancerest.spark.mv.result.ViewDescription;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code spark-submit --class io.lancerest.spark.mv.server.MaterializedViewServer <jar>
 * --upstream URL}: the materialized-view service. It is a Spark driver: views are created and
 * refreshed by the same engine as SQL, in its session, with its own credentials, once the
 * caller was allowed by the upstream. Every other route is the upstream's.
 */
public final class MaterializedViewServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MaterializedViewServer.class);
  /** The catalog the service registers in its session for the upstream. */
  public static final String CATALOG = "mv_service";
  /** What the job log says of a refresh an earlier run of the service accepted, never ran. */
  static final String RESTARTED = "the service restarted before this refresh started; ask for "
      + "it again";

  private final SparkSession spark;
  private final Upstream upstream;
  private final RefreshQueue queue;
  private final CatalogSources sources;
  private final AutoRefresh auto;
  private final ViewService http;

  private MaterializedViewServer(SparkSession spark, ServerConfig cfg) throws IOException {
    this.spark = spark;
    // Spark resolves catalogs through the active session's conf.
    SparkSession.setActiveSession(spark);
    String prefix = "spark.sql.catalog." + CATALOG;
    spark.conf().set(prefix, LanceRestCatalog.class.getName());
    cfg.catalogOptions().forEach((k, v) -> spark.conf().set(prefix + "." + k, v));
    spark.conf().set(prefix + ".mv.mode", "client");
    // The views it creates say so: clients in mv.mode auto send it their refreshes.
    spark.conf().set(io.lancerest.spark.mv.engine.EngineViews.MANAGED_BY_CONF, "service");
    MaterializedViews views = MaterializedViews.forCatalog(spark, CATALOG);
    upstream = new Upstream(cfg.upstream());
    QueuedJobs waiting = QueuedJobs.of(spark, CATALOG);
    try {
      waiting.failLeftOver(RESTARTED);
    } catch (RuntimeException e) {
      // the log unreadable now: those jobs stay SUBMITTED; the service still serves
      LOG.warn("Refreshes left waiting by an earlier run not recorded FAILED: {}",
          e.getMessage());
    }
    sources = new CatalogSources(spark, CATALOG, views);
    ServerConfig.Auto a = cfg.auto();
    queue = new RefreshQueue(cfg.maxConcurrentJobs(), cfg.maxQueuedJobs(),
        (viewId, options, by) -> refresh(views, viewId, options, by), new RefreshQueue.Ledger() {
          @Override
          public void waiting(RefreshQueue.Entry e) {
            waiting.submitted(e.jobId(), e.viewId(), e.launchedBy(), e.submittedAt());
          }

          @Override
          public void endedWaiting(RefreshQueue.Ended e) {
            waiting.endedWaiting(e.jobId(), e.viewId(), e.launchedBy(), e.submittedAt(),
                e.status(), e.message());
          }
        });
    auto = a.enabled() ? new AutoRefresh(sources,
        new ViewDiscovery(sources, a.rescan().toMillis()),
        new RefreshBackoff(a.backoff(), a.backoffMax()), queue, a,
        System::currentTimeMillis) : null;
    ViewEndpoints endpoints = new ViewEndpoints(new EngineAdapter(views), upstream, queue, auto,
        cfg.requireWritePermission());
    http = new ViewService(cfg.host(), cfg.port(), cfg.maxBodyBytes(), endpoints, upstream);
  }

  /** Starts the service on {@code spark} (its catalog {@value #CATALOG} is set up here). */
  public static MaterializedViewServer start(SparkSession spark, ServerConfig cfg) {
    try {
      MaterializedViewServer s = new MaterializedViewServer(spark, cfg);
      s.http.start();
      if (cfg.requireWritePermission()) {
        LOG.warn("--require-write-permission: a caller may create, refresh and cancel only if "
            + "the upstream lets it create the view's namespace (CreateNamespace with mode "
            + "ExistOk, sent as the caller). Whether that matches who may write views depends "
            + "on how {} authorizes: check it with a read-only token (docs/operations.md, "
            + "\"Who may do what\")", s.upstream.display());
      }
      if (s.auto != null) {
        s.auto.start();
      }
      LOG.info("Materialized-view service listening on http://{}:{}, in front of {} ({})",
          cfg.host(), s.port(), cfg.upstream(), cfg);
      return s;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot listen on " + cfg.host() + ":" + cfg.port(), e);
    }
  }

  public int port() {
    return http.port();
  }

  public static void main(String[] argv) throws InterruptedException {
    int rc = run(argv, System.out, System.err);
    if (rc >= 0) {
      System.exit(rc);
    }
  }

  /**
   * Parses the flags and serves until the JVM stops.
   *
   * @return an exit code for bad usage or {@code --help}; -1 after serving
   */
  static int run(String[] argv, PrintStream out, PrintStream err) throws InterruptedException {
    if (List.of(argv).contains("--help") || List.of(argv).contains("-h")) {
      out.print(ServerConfig.USAGE);
      return 0;
    }
    ServerConfig cfg;
    try {
      cfg = ServerConfig.parse(argv);
    } catch (IllegalArgumentException e) {
      err.println("mv-service: " + e.getMessage());
      err.println("Run with --help for the options.");
      return 2;
    }
    SparkSession spark = MainSessions.builder("lance-mv-service").getOrCreate();
    MaterializedViewServer s = start(spark, cfg);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      s.close();
      stopped.countDown();
    }, "mv-service-shutdown"));
    stopped.await();
    return -1;
  }

  /**
   * Runs one refresh of the queue. The outcome of a refresh the service runs, whoever asked for
   * it, decides when auto refresh tries the view next; a cancelled one says nothing of the view.
   * Refreshes run elsewhere (SQL, another client) are not seen here.
   */
  private void refresh(MaterializedViews views, List<String> viewId, RefreshOptions options,
      String launchedBy) {
    SparkSession.setActiveSession(spark);
    spark.sparkContext().setLocalProperty(JobService.LAUNCHED_BY_PROPERTY, launchedBy);
    try {
      views.refresh(viewId, options);
      if (auto != null) {
        auto.succeeded(viewId);
      }
    } catch (RuntimeException | Error e) {
      if (auto != null && !cancelled(e)) {
        auto.failed(viewId, System.currentTimeMillis(), e);
      }
      throw e;
    } finally {
      spark.sparkContext().setLocalProperty(JobService.LAUNCHED_BY_PROPERTY, null);
    }
  }

  private static boolean cancelled(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof RefreshCancelledException) {
        return true;
      }
    }
    return false;
  }

  /** The engine, through the Java API of the service's catalog. */
  private final class EngineAdapter implements ViewEndpoints.Engine {
    private final MaterializedViews views;

    EngineAdapter(MaterializedViews views) {
      this.views = views;
    }

    @Override
    public void create(CreateViewRequest request) {
      SparkSession.setActiveSession(spark);
      views.create(request);
    }

    @Override
    public ViewDescription describe(List<String> viewId) {
      SparkSession.setActiveSession(spark);
      return views.describe(viewId);
    }

    @Override
    public void checkRefresh(ViewDescription view) {
      SparkSession.setActiveSession(spark);
      views.checkRefresh(view);
    }

    @Override
    public void checkJobLog() {
      SparkSession.setActiveSession(spark);
      views.checkJobLog();
    }

    @Override
    public long tableVersion(List<String> viewId) {
      return sources.latestVersion(viewId);
    }

    @Override
    public JobRecord job(String jobId) {
      SparkSession.setActiveSession(spark);
      return views.job(jobId);
    }

    @Override
    public List<JobRecord> jobs(List<String> viewId, int limit) {
      SparkSession.setActiveSession(spark);
      return views.jobs(viewId, limit);
    }

    @Override
    public JobRecord cancel(String jobId) {
      SparkSession.setActiveSession(spark);
      return views.cancel(jobId);
    }
  }

  /** Stops listening and polling; refreshes running now go on to their end. */
  @Override
  public void close() {
    if (auto != null) {
      auto.close();
    }
    http.close();
    queue.close();
    upstream.close();
  }
}
