package io.lancerest.spark.mv.server;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refreshes the views created with {@code auto_refresh = true} when their source has moved on:
 * every poll, a view whose source is at least {@code minSourceVersions} versions ahead of what
 * the view reflects, and whose last auto refresh is older than the cooldown, gets an ordinary
 * refresh job launched by {@value #LAUNCHED_BY}.
 */
final class AutoRefresh implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AutoRefresh.class);
  static final String LAUNCHED_BY = "auto";

  /** What auto refresh reads of the views and their sources. */
  interface Sources {
    /** The views of the namespace whose definition asks for auto refresh. */
    List<List<String>> autoRefreshViews();

    /** The view as auto refresh needs it (one read of the view). */
    Watched watched(List<String> viewId);

    /** The latest version of a source table. */
    long latestVersion(List<String> tableId);
  }

  /**
   * A watched view's state.
   *
   * @param wanted whether it still asks for auto refresh
   * @param reflected the source version it reflects; {@code null} if never refreshed
   */
  record Watched(boolean wanted, Long reflected, List<String> sourceTableId) {
  }

  private final Sources sources;
  private final RefreshQueue queue;
  private final Duration poll;
  private final int minSourceVersions;
  private final Duration cooldown;
  private final LongSupplier clock;
  private final Map<List<String>, Long> watched = new ConcurrentHashMap<>();
  private final long rediscoverMillis;
  private long discoveredAt;
  private ScheduledExecutorService timer;

  AutoRefresh(Sources sources, RefreshQueue queue, Duration poll, int minSourceVersions,
      Duration cooldown, LongSupplier clock) {
    this.sources = sources;
    this.queue = queue;
    this.poll = poll;
    this.minSourceVersions = minSourceVersions;
    this.cooldown = cooldown;
    this.clock = clock;
    // Views created by SQL or other clients, not through this service, are found by listing
    // the namespace again now and then: at most once a minute, at least every tenth poll.
    this.rediscoverMillis = Math.max(60_000, 10 * poll.toMillis());
  }

  /** Finds the views that ask for it and polls from now on. */
  void start() {
    discover();
    LOG.info("Auto refresh: {} views watched, poll every {} ms, at least {} source versions "
        + "behind, cooldown {} ms", watched.size(), poll.toMillis(), minSourceVersions,
        cooldown.toMillis());
    timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "mv-service-auto-refresh");
      t.setDaemon(true);
      return t;
    });
    long every = Math.max(1, poll.toMillis());
    timer.scheduleWithFixedDelay(this::pollQuietly, every, every, TimeUnit.MILLISECONDS);
  }

  private void discover() {
    discoveredAt = clock.getAsLong();
    try {
      sources.autoRefreshViews().forEach(this::watch);
    } catch (RuntimeException e) {
      LOG.warn("Auto refresh: the views of the namespace could not be listed ({}); views "
          + "created through this service are still watched", e.toString());
    }
  }

  void watch(List<String> viewId) {
    watched.putIfAbsent(List.copyOf(viewId), Long.MIN_VALUE);
  }

  private void pollQuietly() {
    try {
      poll();
    } catch (RuntimeException | Error e) {
      LOG.warn("Auto refresh poll failed: {}", e.toString());
    }
  }

  /** One poll; returns the views it started a refresh of. */
  List<List<String>> poll() {
    if (clock.getAsLong() - discoveredAt >= rediscoverMillis) {
      discover();
    }
    List<List<String>> started = new java.util.ArrayList<>();
    for (Map.Entry<List<String>, Long> w : watched.entrySet()) {
      List<String> view = w.getKey();
      long now = clock.getAsLong();
      if (queue.busy(view) || (w.getValue() != Long.MIN_VALUE
          && now - w.getValue() < cooldown.toMillis())) {
        continue;
      }
      try {
        Watched state = sources.watched(view);
        if (!state.wanted()) {
          watched.remove(view);
          continue;
        }
        Long reflected = state.reflected();
        long latest = sources.latestVersion(state.sourceTableId());
        if (reflected != null && latest - reflected < minSourceVersions) {
          continue;
        }
        RefreshQueue.Submitted s = queue.submit(view, RefreshOptions.DEFAULTS, LAUNCHED_BY);
        w.setValue(now);
        started.add(view);
        LOG.info("Auto refresh of view {}: source at version {}, the view reflects {}; job {}",
            String.join(".", view), latest, reflected, s.jobId());
      } catch (MaterializedViewNotFoundException gone) {
        watched.remove(view);
      } catch (ServiceError full) {
        LOG.info("Auto refresh of view {} waits: {}", String.join(".", view),
            full.getMessage());
      } catch (RuntimeException e) {
        LOG.warn("Auto refresh of view {} skipped this poll: {}", String.join(".", view),
            e.toString());
      }
    }
    return started;
  }

  @Override
  public void close() {
    if (timer != null) {
      timer.shutdownNow();
    }
  }
}
