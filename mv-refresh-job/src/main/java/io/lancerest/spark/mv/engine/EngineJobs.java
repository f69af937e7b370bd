package io.lancerest.spark.mv.engine;

import com.fasterxml.jackson.databind.JsonNode;
import io.lancerest.client.LanceJson;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.refresh.JobTracker;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.result.JobRecord;
import io.lancerest.spark.mv.result.RefreshResult.JobStatus;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.sql.SparkSession;

/**
 * The job operations of the engine (SHOW JOBS, DESCRIBE JOB, CANCEL JOB, the job of each
 * client-managed refresh) over the catalog's {@link JobService}. What a reader is shown is
 * derived, never written: a RUNNING job whose heartbeat is older than {@value
 * JobService#HEARTBEAT_TIMEOUT_CONF} is FAILED (driver lost), and the view's own last job, which
 * its commit recorded, wins over a log that missed the end of that job.
 */
final class EngineJobs {
  private final SparkSession spark;
  private final CatalogBinding cat;
  /** The last job JSON a view's commit recorded ({@code null}: none, or no such view). */
  private final Function<List<String>, String> lastJobOfView;
  private JobService service;
  private boolean looked;

  EngineJobs(SparkSession spark, CatalogBinding cat, Function<List<String>, String> lastJob) {
    this.spark = spark;
    this.cat = cat;
    this.lastJobOfView = lastJob;
  }

  private JobService service() {
    if (!looked) {
      service = JobService.of(spark, cat);
      looked = true;
    }
    return service;
  }

  /** The job of a refresh of {@code viewId} (catalog-relative) starting now. */
  JobTracker open(String jobId, List<String> viewId) {
    JobService s = service();
    return s == null ? JobTracker.none(jobId) : s.open(jobId, cat.serverId(viewId));
  }

  /**
   * Refuses, before a refresh starts, a job log its server manages the versions of ({@link
   * ManagedVersions#JOB_LOG}): the refresh's job would be appended to it in storage. With {@code
   * create}, the log is created if missing (the refresh would create it), else only an existing
   * one is checked (EXPLAIN; a log this catalog found missing is not described again). No log
   * kept, nothing to check.
   *
   * @param lead what is refused, the first words of the message
   * @param outcome what was left undone, or {@code null}
   */
  void requireWritableLog(String lead, boolean create, String outcome) {
    JobService s = service();
    if (s == null) {
      return;
    }
    if (create) {
      s.table().writable(lead, outcome);
    } else {
      ManagedVersions.JOB_LOG.refuse(s.table().locationIfKnownPresent(), cat, lead, outcome);
    }
  }

  /** The refresh of {@code t} returned or threw. */
  void closed(JobTracker t) {
    if (service != null) {
      service.close(t);
    }
  }

  /** Runs {@code refresh} (which ends {@code t}) on the catalog's ASYNC threads. */
  void submit(JobTracker t, Runnable refresh) {
    JobService s = service();
    if (s == null) {
      throw disabled();
    }
    s.submit(spark, t, refresh);
  }

  /** The newest first; {@code viewId} (catalog-relative) {@code null} for every view. */
  List<JobRecord> jobs(List<String> viewId, int limit) {
    if (limit < 0) {
      throw new io.lancerest.spark.mv.error.InvalidOptionException("LIMIT must be 0 or more, got "
          + limit);
    }
    JobService s = service();
    if (s == null) {
      throw disabled();
    }
    List<String> server = viewId == null ? null : cat.serverId(viewId);
    List<JobRecord> out = new ArrayList<>();
    Map<List<String>, String> lastJobs = new HashMap<>();
    for (JobRecord r : s.table().latest()) {
      if (server == null || server.equals(r.viewId())) {
        out.add(shown(s, r, lastJobs));
      }
    }
    out.sort(Comparator.comparingLong(JobRecord::startedAt).reversed()
        .thenComparing(JobRecord::jobId));
    return out.size() > limit ? new ArrayList<>(out.subList(0, limit)) : out;
  }

  JobRecord job(String jobId) {
    JobService s = service();
    if (s == null) {
      throw disabled();
    }
    JobTracker live = s.running(jobId);
    if (live != null) {
      return live.current();
    }
    for (JobRecord r : s.table().latest()) {
      if (r.jobId().equals(jobId)) {
        return shown(s, r, new HashMap<>());
      }
    }
    throw notFound(s, jobId);
  }

  /**
   * Stops a RUNNING job of this application: its job group is cancelled (the Spark jobs running
   * now fail) and the refresh stops at its next phase or before its commit, whichever is first.
   * Waits up to {@value JobService#CANCEL_WAIT_CONF} for the job to end and returns its state.
   */
  JobRecord cancel(String jobId) {
    JobService s = service();
    if (s == null) {
      throw disabled();
    }
    long wait = JobService.millis(spark, JobService.CANCEL_WAIT_CONF,
        JobService.DEFAULT_CANCEL_WAIT);
    JobTracker live = s.running(jobId);
    if (live != null) {
      live.requestCancel();
      spark.sparkContext().cancelJobsWithTag(RefreshContext.jobTag(jobId));
      try {
        live.awaitEnd(wait);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return live.current();
    }
    JobRecord r = job(jobId);
    if (r.status().ended()) {
      throw new MaterializedViewException("Job '" + jobId + "' of view " + r.view() + " has "
          + "already ended (" + r.status() + (r.message() == null ? "" : ": " + r.message())
          + "); CANCEL JOB stops RUNNING jobs only");
    }
    if (!s.applicationId().equals(r.applicationId())) {
      throw new MaterializedViewException("Job '" + jobId + "' of view " + r.view() + " runs "
          + "in Spark application " + r.applicationId() + ", not in this one ("
          + s.applicationId() + "): CANCEL JOB stops jobs of this application only. Cancel it "
          + "from that application, or stop that application; its job is then shown FAILED "
          + "(driver lost) once its heartbeat is older than " + JobService.HEARTBEAT_TIMEOUT_CONF);
    }
    // Another session of this application runs it: its job tag is shared, its catalog not.
    spark.sparkContext().cancelJobsWithTag(RefreshContext.jobTag(jobId));
    long deadline = System.currentTimeMillis() + wait;
    while (System.currentTimeMillis() < deadline) {
      r = job(jobId);
      if (r.status().ended()) {
        return r;
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    return r;
  }

  /** What {@code r} is shown as: live, driver lost, or as the view's last job says. */
  private JobRecord shown(JobService s, JobRecord r, Map<List<String>, String> lastJobs) {
    JobTracker live = s.running(r.jobId());
    if (live != null) {
      return live.current();
    }
    if (r.status() == JobStatus.DONE || r.status() == JobStatus.PARTIAL
        || r.status() == JobStatus.SKIPPED) {
      return r;
    }
    JobRecord committed = fromViewLastJob(r, lastJobs);
    if (committed != null) {
      return committed;
    }
    if (r.status() == JobStatus.RUNNING) {
      long timeout = JobService.millis(spark, JobService.HEARTBEAT_TIMEOUT_CONF,
          JobService.DEFAULT_HEARTBEAT_TIMEOUT);
      if (System.currentTimeMillis() - r.heartbeatAt() > timeout) {
        return r.shownAs(JobStatus.FAILED, null, "driver lost: no heartbeat since "
            + Instant.ofEpochMilli(r.heartbeatAt()) + ", more than " + timeout / 1000 + " s ago ("
            + JobService.HEARTBEAT_TIMEOUT_CONF + "); nothing of it was committed after that");
      }
    }
    return r;
  }

  /** The job as its view's last commit recorded it, when that commit is this job's. */
  private JobRecord fromViewLastJob(JobRecord r, Map<List<String>, String> lastJobs) {
    if (r.viewId().isEmpty()) {
      return null;
    }
    String json = lastJobs.computeIfAbsent(r.viewId(), id -> {
      try {
        String j = lastJobOfView.apply(cat.relativeId(id));
        return j == null ? "" : j;
      } catch (RuntimeException gone) {
        return "";
      }
    });
    if (json.isEmpty()) {
      return null;
    }
    try {
      JsonNode n = LanceJson.mapper().readTree(json);
      if (!r.jobId().equals(n.path("job_id").asText(null))) {
        return null;
      }
      // A run reusing the job id (a scheduler's retry) is not the run that committed before it.
      if (n.has("finished_at_ms") && n.get("finished_at_ms").asLong() < r.startedAt()) {
        return null;
      }
      JobStatus st = JobStatus.valueOf(n.path("status").asText("DONE"));
      long finished = n.path("finished_at_ms").asLong(r.heartbeatAt());
      String kind = n.path("kind").asText(r.kind());
      return new JobRecord(r.jobId(), r.viewId(), kind == null ? MaterializedViewKind.QUERY
          .wire() : kind, st, n.has("source_version") ? n.get("source_version").asLong()
          : r.sourceVersion(), r.startedAt(), finished, r.heartbeatAt(), r.itemsDone(),
          r.itemsTotal(), r.rowsWritten(), n.path("rows_inserted").asLong(0),
          n.path("rows_deleted").asLong(0), r.skipped(), "as the view's last commit recorded "
              + "it (the job log missed the end of this job)", r.applicationId(),
          r.launchedBy(), r.seq());
    } catch (java.io.IOException | IllegalArgumentException e) {
      return null;
    }
  }

  private MaterializedViewException notFound(JobService s, String jobId) {
    return new MaterializedViewException("Job '" + jobId + "' is not in the job log "
        + s.table().display() + " of catalog '" + cat.name() + "'; SHOW JOBS lists the jobs it "
        + "has");
  }

  private MaterializedViewException disabled() {
    return new MaterializedViewException("Catalog '" + cat.name() + "' keeps no job log ("
        + JobService.ENABLED_CONF + " = false, or it is not a LanceRestCatalog); set "
        + JobService.ENABLED_CONF + " = true to record, list and cancel refresh jobs");
  }
}
