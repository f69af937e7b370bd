package io.lancerest.spark.mv.server;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.refresh.JobTracker;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
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
 * the view reflects, whose last auto refresh is older than the cooldown and whose failures in a
 * row ({@link RefreshBackoff}) allow another try, gets an ordinary refresh job launched by
 * {@value #LAUNCHED_BY}. Views created elsewhere are found by {@link ViewDiscovery}.
 */
final class AutoRefresh implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AutoRefresh.class);
  static final String LAUNCHED_BY = "auto";

  /** What auto refresh reads of the views and their sources. */
  interface Sources {
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
   * @param definition the view's definition in a form that changes when the definition does
   */
  record Watched(boolean wanted, Long reflected, List<String> sourceTableId, String definition) {
  }

  /** What the service's status route says of a view's auto refresh. */
  record Status(boolean watched, Optional<RefreshBackoff.State> failing) {}

  /** A watched view: when auto refresh last started it, and the definition it last read. */
  private record Tracked(long startedAt, String definition) {
    static final Tracked NEW = new Tracked(Long.MIN_VALUE, null);
  }

  private final Sources sources;
  private final ViewDiscovery discovery;
  private final RefreshBackoff backoff;
  private final RefreshQueue queue;
  private final ServerConfig.Auto cfg;
  private final LongSupplier clock;
  private final Map<List<String>, Tracked> watched = new ConcurrentHashMap<>();
  private final long rediscoverMillis;
  private long discoveredAt;
  private ScheduledExecutorService timer;

  AutoRefresh(Sources sources, ViewDiscovery discovery, RefreshBackoff backoff,
      RefreshQueue queue, ServerConfig.Auto cfg, LongSupplier clock) {
    this.sources = sources;
    this.discovery = discovery;
    this.backoff = backoff;
    this.queue = queue;
    this.cfg = cfg;
    this.clock = clock;
    // Views created by SQL or other clients, not through this service, are found by listing
    // the namespaces again now and then: at most once a minute, at least every tenth poll.
    this.rediscoverMillis = Math.max(60_000, 10 * cfg.poll().toMillis());
  }

  /** Finds the views that ask for it and polls from now on. */
  void start() {
    discover();
    LOG.info("Auto refresh: {} views watched, poll every {} ms, at least {} source versions "
        + "behind, cooldown {} ms, after a failure a wait of {} ms doubling up to {} ms",
        watched.size(), cfg.poll().toMillis(), cfg.minSourceVersions(),
        cfg.cooldown().toMillis(), cfg.backoff().toMillis(), cfg.backoffMax().toMillis());
    timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "mv-service-auto-refresh");
      t.setDaemon(true);
      return t;
    });
    long every = Math.max(1, cfg.poll().toMillis());
    timer.scheduleWithFixedDelay(this::pollQuietly, every, every, TimeUnit.MILLISECONDS);
  }

  /**
   * Watches the views discovery finds. After a full rescan, a view watched before it began that
   * the rescan did not find asking for auto refresh (and that the upstream did describe) is
   * watched no longer: replaced by a table, unreadable, or changed elsewhere.
   */
  private void discover() {
    discoveredAt = clock.getAsLong();
    Set<List<String>> before = Set.copyOf(watched.keySet());
    ViewDiscovery.Found found;
    try {
      found = discovery.discover(discoveredAt);
    } catch (RuntimeException e) {
      LOG.warn("Auto refresh: the views of the namespace could not be listed ({}); views "
          + "created through this service are still watched", e.toString());
      return;
    }
    found.autoRefresh().forEach(this::watch);
    if (found.rescan()) {
      for (List<String> v : before) {
        if (!found.autoRefresh().contains(v) && !found.unanswered().contains(v)) {
          LOG.info("Auto refresh: view {} was not found asking for auto refresh by the full "
              + "rescan; no longer watched", String.join(".", v));
          unwatch(v);
        }
      }
    }
  }

  private void watch(List<String> viewId) {
    watched.putIfAbsent(List.copyOf(viewId), Tracked.NEW);
  }

  /**
   * A view was just created through the service under {@code viewId}: whatever was known of an
   * earlier table of that name (its failures, its cooldown) is forgotten, and the view is
   * watched when it asks for auto refresh.
   */
  void created(List<String> viewId, boolean autoRefresh) {
    List<String> id = List.copyOf(viewId);
    unwatch(id);
    if (autoRefresh) {
      watched.put(id, Tracked.NEW);
    }
  }

  /** A refresh of {@code viewId} succeeded, whoever asked for it: its failures are cleared. */
  void succeeded(List<String> viewId) {
    backoff.reset(viewId);
  }

  /**
   * A refresh of {@code viewId} this service ran failed, whoever asked for it: while the view
   * is watched, the failure delays its next auto refresh ({@link RefreshBackoff}). Recorded
   * under the view's entry, so that a view unwatched meanwhile (dropped, replaced) gets no
   * failures that would outlive it.
   */
  void failed(List<String> viewId, long now, Throwable failure) {
    String error = JobTracker.redact(failure.getClass().getSimpleName() + ": "
        + failure.getMessage());
    boolean passing = RefreshBackoff.passing(failure);
    RefreshBackoff.State[] recorded = new RefreshBackoff.State[1];
    watched.computeIfPresent(List.copyOf(viewId), (id, t) -> {
      recorded[0] = passing ? backoff.failedPassing(id, now, error)
          : backoff.failed(id, now, error);
      return t;
    });
    RefreshBackoff.State st = recorded[0];
    if (st == null) {
      return;
    }
    String view = String.join(".", viewId);
    long waitS = (st.nextAttemptAt() - st.lastFailureAt()) / 1000;
    if (passing) {
      LOG.info("View {}: refresh failed for a passing cause ({}); auto refresh tries it again "
          + "in {} s, without counting it against the view", view, error, waitS);
    } else {
      LOG.warn("View {}: {} failed refreshes in a row; auto refresh tries it again in {} s "
          + "(a refresh asked for runs at once)", view, st.failures(), waitS);
    }
  }

  Status status(List<String> viewId) {
    return new Status(watched.containsKey(viewId), backoff.state(viewId));
  }

  /** Stops watching; the order matters: {@link #failed} records nothing once it is removed. */
  private void unwatch(List<String> viewId) {
    watched.remove(viewId);
    backoff.reset(viewId);
    discovery.forget(viewId);
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
    List<List<String>> started = new ArrayList<>();
    for (Map.Entry<List<String>, Tracked> w : watched.entrySet()) {
      List<String> view = w.getKey();
      long now = clock.getAsLong();
      if (queue.busy(view) || (w.getValue().startedAt() != Long.MIN_VALUE
          && now - w.getValue().startedAt() < cfg.cooldown().toMillis())) {
        continue;
      }
      try {
        if (pollOne(view, w.getValue(), now)) {
          started.add(view);
        }
      } catch (MaterializedViewNotFoundException gone) {
        LOG.info("Auto refresh: view {} is gone; no longer watched", String.join(".", view));
        unwatch(view);
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

  /** Looks at one view; starts its refresh when it is behind and its failures allow it. */
  private boolean pollOne(List<String> view, Tracked tracked, long now) {
    Watched state = sources.watched(view);
    if (!state.wanted()) {
      LOG.info("Auto refresh: {} is not a view asking for auto refresh any more; no longer "
          + "watched", String.join(".", view));
      unwatch(view);
      return false;
    }
    if (tracked.definition() != null
        && !Objects.equals(tracked.definition(), state.definition())) {
      backoff.reset(view); // another definition: its predecessor's failures say nothing of it
    }
    watched.replace(view, tracked, new Tracked(tracked.startedAt(), state.definition()));
    if (!backoff.due(view, now)) {
      return false;
    }
    Long reflected = state.reflected();
    long latest = sources.latestVersion(state.sourceTableId());
    if (reflected != null && latest - reflected < cfg.minSourceVersions()) {
      return false;
    }
    RefreshQueue.Submitted s = queue.submit(view, RefreshOptions.DEFAULTS, LAUNCHED_BY);
    // replace, not put: a view unwatched meanwhile (created anew, dropped) stays so
    watched.replace(view, new Tracked(now, state.definition()));
    LOG.info("Auto refresh of view {}: source at version {}, the view reflects {}; job {}",
        String.join(".", view), latest, reflected, s.jobId());
    return true;
  }

  @Override
  public void close() {
    if (timer != null) {
      timer.shutdownNow();
    }
  }
}
