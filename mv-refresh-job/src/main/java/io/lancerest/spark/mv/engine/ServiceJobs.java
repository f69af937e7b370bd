package io.lancerest.spark.mv.engine;

import io.lancerest.client.error.NotFoundException;
import io.lancerest.client.model.CancelMaterializedViewJobRequest;
import io.lancerest.client.model.DescribeMaterializedViewJobRequest;
import io.lancerest.client.model.ListMaterializedViewJobsRequest;
import io.lancerest.client.model.ListMaterializedViewJobsResponse;
import io.lancerest.client.model.MaterializedViewJob;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.result.JobRecord;
import io.lancerest.spark.mv.result.RefreshResult.JobStatus;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The jobs of views a view service refreshes, read and cancelled through the service's job
 * routes as the caller: the service checks the caller's rights on the view and its source, so a
 * caller needs none on the job log the service writes.
 */
final class ServiceJobs {
  /** Largest page asked of the service (its own limit). */
  private static final int PAGE = 1000;

  private final CatalogBinding cat;

  ServiceJobs(CatalogBinding cat) {
    this.cat = cat;
  }

  /**
   * The job ids this catalog's refreshes were answered with, by view: DESCRIBE JOB and CANCEL
   * JOB of such an id need no view named. Kept with the catalog's caches, bounded.
   */
  static final class Answered {
    private static final int KEPT = 10_000;
    private final Map<String, List<String>> views = new LinkedHashMap<>(16, 0.75f, false) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, List<String>> eldest) {
        return size() > KEPT;
      }
    };

    synchronized void put(String jobId, List<String> relativeViewId) {
      views.put(jobId, List.copyOf(relativeViewId));
    }

    synchronized List<String> viewOf(String jobId) {
      return views.get(jobId);
    }
  }

  private Answered answered() {
    return cat.caches().get(Answered.class, Answered::new);
  }

  /** Remembers that a refresh of {@code relativeViewId} was answered with {@code jobId}. */
  void answered(String jobId, List<String> relativeViewId) {
    if (jobId != null) {
      answered().put(jobId, relativeViewId);
    }
  }

  /** The view of a job this catalog was answered with, or {@code null}. */
  List<String> viewOf(String jobId) {
    return answered().viewOf(jobId);
  }

  /** The view's jobs, newest first, at most {@code limit}. */
  List<JobRecord> list(List<String> relativeViewId, int limit) {
    List<JobRecord> out = new ArrayList<>();
    String token = null;
    while (out.size() < limit) {
      ListMaterializedViewJobsResponse page;
      try {
        page = cat.client().listMaterializedViewJobs(new ListMaterializedViewJobsRequest(
            cat.serverId(relativeViewId), token, Math.min(PAGE, limit - out.size())));
      } catch (NotFoundException e) {
        throw new io.lancerest.spark.mv.error.MaterializedViewNotFoundException("Materialized "
            + "view " + cat.display(relativeViewId) + " does not exist on the service", e);
      }
      for (MaterializedViewJob j : page.jobs() == null ? List.<MaterializedViewJob>of()
          : page.jobs()) {
        out.add(record(j));
      }
      token = page.pageToken();
      if (token == null || token.isEmpty() || page.jobs() == null || page.jobs().isEmpty()) {
        break;
      }
    }
    return out.size() > limit ? new ArrayList<>(out.subList(0, limit)) : out;
  }

  JobRecord describe(List<String> relativeViewId, String jobId) {
    try {
      return record(cat.client().describeMaterializedViewJob(
          new DescribeMaterializedViewJobRequest(cat.serverId(relativeViewId), jobId)));
    } catch (NotFoundException e) {
      throw notFound(relativeViewId, jobId, e);
    }
  }

  JobRecord cancel(List<String> relativeViewId, String jobId) {
    try {
      return record(cat.client().cancelMaterializedViewJob(
          new CancelMaterializedViewJobRequest(cat.serverId(relativeViewId), jobId)));
    } catch (NotFoundException e) {
      throw notFound(relativeViewId, jobId, e);
    }
  }

  private MaterializedViewException notFound(List<String> view, String jobId,
      NotFoundException e) {
    return new MaterializedViewException("Job '" + jobId + "' is not a job of view "
        + cat.display(view) + " on the service at " + cat.client().config().uri() + " ("
        + e.getMessage() + "); SHOW JOBS FOR " + cat.display(view) + " lists its jobs", e);
  }

  /** A job as the service answered it, in the job log's terms. */
  static JobRecord record(MaterializedViewJob j) {
    JobStatus status;
    try {
      status = JobStatus.valueOf(String.valueOf(j.status()));
    } catch (IllegalArgumentException e) {
      throw new MaterializedViewException("The service answered job " + j.jobId()
          + " with status '" + j.status() + "', which this client does not know");
    }
    long started = j.startedAt() != null ? j.startedAt()
        : j.submittedAt() != null ? j.submittedAt() : 0;
    MaterializedViewJob.Progress p = j.progress();
    return new JobRecord(j.jobId(), j.viewId(), j.kind(), status, j.sourceVersion(), started,
        j.finishedAt(), j.heartbeatAt() != null ? j.heartbeatAt() : started,
        p == null ? 0 : zero(p.itemsDone()), p == null ? 0 : zero(p.itemsTotal()),
        p == null ? 0 : zero(p.rowsWritten()), zero(j.rowsInserted()), zero(j.rowsDeleted()),
        zero(j.skipped()), j.message(), j.applicationId(), j.launchedBy(), 0);
  }

  private static long zero(Long v) {
    return v == null ? 0 : v;
  }
}
