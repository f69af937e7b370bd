package io.lancerest.spark.mv.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lancerest.client.LanceJson;
import io.lancerest.client.error.ErrorCode;
import io.lancerest.client.model.CreateMaterializedViewRequest;
import io.lancerest.client.model.RefreshMaterializedViewRequest;
import io.lancerest.spark.mv.CreateViewRequest;
import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.result.JobRecord;
import io.lancerest.spark.mv.result.RefreshResult;
import io.lancerest.spark.mv.result.ViewDescription;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import okhttp3.Headers;

/**
 * The service's materialized-view routes: each checks the caller against the upstream (may it
 * see the view and its source; with {@code requireWrite}, may it write in the view's namespace),
 * then acts with the engine (in the service's Spark session, with the service's own
 * credentials).
 */
final class ViewEndpoints {
  /**
   * The wire mapping, strict about what a client sends: no strings or floats taken for numbers
   * or booleans, nothing after the object. Unknown fields are still ignored (spec clients send
   * fields of newer versions).
   */
  private static final ObjectMapper JSON = LanceJson.mapper().copy()
      .disable(com.fasterxml.jackson.databind.MapperFeature.ALLOW_COERCION_OF_SCALARS)
      .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .disable(com.fasterxml.jackson.databind.DeserializationFeature.ACCEPT_FLOAT_AS_INT);
  static final int MAX_OFFSET = 1_000_000;
  static final int DEFAULT_PAGE = 100;
  static final int MAX_PAGE = 1000;

  /** A JSON answer. */
  record Answer(int status, byte[] body, String contentType, int retryAfterSeconds) {
    static Answer json(int status, JsonNode body) {
      return new Answer(status, body.toString().getBytes(StandardCharsets.UTF_8),
          "application/json", 0);
    }
  }

  /** What the endpoints need of the engine; the service's is {@link MaterializedViews}. */
  interface Engine {
    void create(CreateViewRequest request);

    ViewDescription describe(List<String> viewId);

    /** Throws what a refresh of the view, as just described, would be refused with. */
    void checkRefresh(ViewDescription view);

    /** Throws what recording a refresh job would be refused with (creates a missing log). */
    void checkJobLog();

    long tableVersion(List<String> viewId);

    JobRecord job(String jobId);

    List<JobRecord> jobs(List<String> viewId, int limit);

    /** Cancels a running job of the service; waits a little for it to end (CANCEL JOB). */
    JobRecord cancel(String jobId);
  }

  private final Engine engine;
  private final Upstream upstream;
  private final RefreshQueue queue;
  private final AutoRefresh auto;
  private final boolean requireWrite;

  ViewEndpoints(Engine engine, Upstream upstream, RefreshQueue queue, AutoRefresh auto,
      boolean requireWrite) {
    this.engine = engine;
    this.upstream = upstream;
    this.queue = queue;
    this.auto = auto;
    this.requireWrite = requireWrite;
  }

  // ------------------------------------------------------------------ create

  Answer create(List<String> viewId, String delimiter, byte[] body, Headers caller) {
    CreateMaterializedViewRequest r = parse(body, CreateMaterializedViewRequest.class,
        "CreateMaterializedViewRequest");
    CreateRequests.Mapped m = CreateRequests.map(viewId, r, MaterializedViewServer.CATALOG);
    List<String> source = m.sourceTableId();
    allowed(upstream.describeAs(caller, "table", source, delimiter));
    List<String> ns = viewId.subList(0, viewId.size() - 1);
    allowed(upstream.describeAs(caller, "namespace", ns, delimiter));
    writable(viewId, delimiter, caller, "create");
    if (m.withData() && !queue.hasRoom()) {
      throw queue.full(null);
    }
    try {
      if (m.withData()) {
        engine.checkJobLog(); // before the view exists: its refresh, queued below, records a job
      }
      engine.create(m.request());
    } catch (RuntimeException e) {
      throw VersionManagedAnswer.of(e, "CREATE MATERIALIZED VIEW", viewId, "Nothing was created.");
    }
    long version = engine.tableVersion(viewId);
    if (auto != null) {
      auto.created(viewId, m.autoRefresh()); // nothing of an earlier table of the name stays
    }
    ObjectNode out = JSON.createObjectNode();
    out.put("version", version);
    if (m.withData()) {
      out.put("job_id", queue.submit(viewId, RefreshOptions.DEFAULTS, "service").jobId());
    }
    return Answer.json(201, out);
  }

  // ------------------------------------------------------------------ refresh

  Answer refresh(List<String> viewId, String delimiter, byte[] body, Headers caller) {
    RefreshMaterializedViewRequest r = body.length == 0
        ? new RefreshMaterializedViewRequest()
        : parse(body, RefreshMaterializedViewRequest.class, "RefreshMaterializedViewRequest");
    if (r.getId() != null && !r.getId().isEmpty() && !r.getId().equals(viewId)) {
      throw ServiceError.badRequest("The body's id " + r.getId() + " is not the view of the path "
          + viewId);
    }
    RefreshOptions options = options(r);
    ViewDescription d = visibleView(viewId, delimiter, caller);
    writable(viewId, delimiter, caller, "refresh");
    try {
      options.checkApplicableTo(d.definition().kind());
      engine.checkRefresh(d); // answered now, not as a job that fails later
    } catch (RuntimeException e) {
      throw VersionManagedAnswer.of(e, "REFRESH MATERIALIZED VIEW", viewId, "No job was queued.");
    }
    RefreshQueue.Submitted s = queue.submit(viewId, options, "service");
    ObjectNode out = JSON.createObjectNode();
    out.put("job_id", s.jobId());
    return Answer.json(202, out);
  }

  static RefreshOptions options(RefreshMaterializedViewRequest r) {
    try {
      return RefreshOptions.builder()
          .srcVersion(r.getSrcVersion())
          .maxRowsPerFragment(
              RefreshOptions.narrow("max_rows_per_fragment", r.getMaxRowsPerFragment()))
          .concurrency(RefreshOptions.narrow("concurrency", r.getConcurrency()))
          .intraApplierConcurrency(RefreshOptions.narrow("intra_applier_concurrency",
              r.getIntraApplierConcurrency()))
          .sourceTaskSize(RefreshOptions.narrow("source_task_size", r.getSourceTaskSize()))
          .outputLimit(r.getOutputLimit())
          .cluster(r.getCluster()).manifest(r.getManifest()).build();
    } catch (RuntimeException e) {
      throw ServiceError.of(e);
    }
  }

  // ------------------------------------------------------------------ jobs

  Answer describeJob(List<String> viewId, String delimiter, byte[] body, Headers caller) {
    String jobId = jobId(body, "job/describe");
    visibleView(viewId, delimiter, caller);
    Optional<RefreshQueue.Entry> held = queue.job(jobId);
    JobRecord rec = null;
    if (held.isEmpty() || held.get().started()) {
      try {
        rec = engine.job(jobId);
      } catch (RuntimeException notInTheLog) {
        // not recorded (yet): the queue may know it, else it is unknown
      }
    }
    ObjectNode out;
    if (rec != null) {
      if (!rec.viewId().equals(viewId)) {
        throw notFoundJob(jobId, viewId);
      }
      out = JobJson.of(rec);
    } else if (held.isPresent() && held.get().viewId().equals(viewId)) {
      out = JobJson.waiting(held.get());
    } else {
      Optional<RefreshQueue.Ended> ended = queue.ended(jobId);
      if (ended.isEmpty() || !ended.get().viewId().equals(viewId)) {
        throw notFoundJob(jobId, viewId);
      }
      out = JobJson.ended(ended.get());
    }
    return Answer.json(200, out);
  }

  /**
   * Cancels a refresh of the view: one waiting for a slot never runs (CANCELLED), a running one
   * is stopped by the engine; a cancelled one is answered as it is (a retry is harmless), a
   * job that ended otherwise is a 409.
   */
  Answer cancelJob(List<String> viewId, String delimiter, byte[] body, Headers caller) {
    String jobId = jobId(body, "job/cancel");
    visibleView(viewId, delimiter, caller);
    writable(viewId, delimiter, caller, "cancel jobs of");
    RefreshQueue.Cancel c = queue.cancel(jobId, viewId);
    if (c.ended() != null) {
      return Answer.json(200, JobJson.ended(c.ended()));
    }
    if (!c.held()) {
      Optional<RefreshQueue.Ended> ended = queue.ended(jobId);
      if (ended.isPresent() && ended.get().viewId().equals(viewId)) {
        return Answer.json(200, JobJson.ended(ended.get()));
      }
    }
    JobRecord rec;
    try {
      rec = engine.job(jobId);
    } catch (RuntimeException notInTheLog) {
      throw notFoundJob(jobId, viewId);
    }
    if (!rec.viewId().equals(viewId)) {
      throw notFoundJob(jobId, viewId);
    }
    if (rec.status() == RefreshResult.JobStatus.CANCELLED) {
      return Answer.json(200, JobJson.of(rec)); // cancelled already: a retry, or a second ask
    }
    if (rec.status().ended()) {
      throw new ServiceError(409, ErrorCode.CONCURRENT_MODIFICATION, "Job '" + jobId + "' of "
          + "view " + String.join(".", viewId) + " has already ended (" + rec.status() + "); "
          + "job/cancel stops waiting and running jobs only");
    }
    try {
      return Answer.json(200, JobJson.of(engine.cancel(jobId)));
    } catch (RuntimeException e) {
      throw ServiceError.of(e);
    }
  }

  Answer listJobs(List<String> viewId, String delimiter, byte[] body, Headers caller) {
    JsonNode n = tree(body);
    int limit = n.path("limit").isMissingNode() || n.path("limit").isNull() ? DEFAULT_PAGE
        : n.path("limit").asInt(-1);
    if (limit < 1 || limit > MAX_PAGE) {
      throw ServiceError.badRequest("limit must be from 1 to " + MAX_PAGE + ", got "
          + n.path("limit"));
    }
    int offset = 0;
    String token = n.path("page_token").asText(null);
    if (token != null && !token.isEmpty()) {
      try {
        offset = Integer.parseInt(token);
      } catch (NumberFormatException e) {
        offset = -1;
      }
      if (offset < 0 || offset > MAX_OFFSET) {
        throw ServiceError.badRequest("page_token '" + token + "' is not one this service "
            + "gave; start without it");
      }
    }
    visibleView(viewId, delimiter, caller);
    List<JobRecord> all = engine.jobs(viewId, offset + limit + 1);
    ArrayNode jobs = JSON.createArrayNode();
    for (int i = offset; i < Math.min(all.size(), offset + limit); i++) {
      jobs.add(JobJson.of(all.get(i)));
    }
    ObjectNode out = JSON.createObjectNode();
    out.set("jobs", jobs);
    if (all.size() > offset + limit) {
      out.put("page_token", Integer.toString(offset + limit));
    }
    out.set("auto_refresh", autoRefresh(viewId));
    return Answer.json(200, out);
  }

  /**
   * The view's state as the service sees it: its auto refresh (watched or not, failures in a
   * row and when it is tried next) and its latest job.
   */
  Answer status(List<String> viewId, String delimiter, byte[] body, Headers caller) {
    tree(body); // a JSON object or nothing
    visibleView(viewId, delimiter, caller);
    ObjectNode out = JSON.createObjectNode();
    ArrayNode id = out.putArray("view_id");
    viewId.forEach(id::add);
    out.set("auto_refresh", autoRefresh(viewId));
    List<JobRecord> latest = engine.jobs(viewId, 1);
    if (!latest.isEmpty()) {
      out.set("latest_job", JobJson.of(latest.get(0)));
    }
    return Answer.json(200, out);
  }

  private ObjectNode autoRefresh(List<String> viewId) {
    return JobJson.autoRefresh(auto == null ? null : auto.status(viewId));
  }

  // ------------------------------------------------------------------ helpers

  /** The {@code job_id} a job route's body names. */
  private static String jobId(byte[] body, String route) {
    String jobId = tree(body).path("job_id").asText(null);
    if (jobId == null || jobId.isBlank()) {
      throw ServiceError.badRequest(route + " needs {\"job_id\": \"...\"}");
    }
    return jobId;
  }

  /** The view as the engine reads it, once the caller may see it and its source upstream. */
  private ViewDescription visibleView(List<String> viewId, String delimiter, Headers caller) {
    allowed(upstream.describeAs(caller, "table", viewId, delimiter));
    ViewDescription d;
    try {
      d = engine.describe(viewId);
    } catch (RuntimeException e) {
      throw ServiceError.of(e);
    }
    if (d == null || d.definition() == null) {
      throw new ServiceError(404, ErrorCode.TABLE_NOT_FOUND, "Table " + String.join(".",
          viewId) + " is not a materialized view");
    }
    List<String> source = d.definition().sourceQuery().sourceTableId();
    allowed(upstream.describeAs(caller, "table", source, delimiter));
    return d;
  }

  /**
   * With {@code requireWrite}: whether the upstream lets the caller create the view's namespace
   * ({@link Upstream#mayWriteAs}), which stands for its write there. A caller the upstream does
   * not know gets the upstream's 401 as it came (so that a client refreshes its token); one it
   * refuses gets a 403 that says what was checked.
   */
  private void writable(List<String> viewId, String delimiter, Headers caller, String action) {
    if (!requireWrite) {
      return;
    }
    List<String> ns = viewId.subList(0, viewId.size() - 1);
    Upstream.WriteCheck c = upstream.mayWriteAs(caller, ns, delimiter);
    String view = String.join(".", viewId);
    String where = ns.isEmpty() ? "the root namespace" : "namespace " + String.join(".", ns);
    switch (c.answer()) {
      case ALLOWED -> { }
      case UNAUTHENTICATED -> throw new Refused(c.upstream());
      case REFUSED -> throw new ServiceError(403, ErrorCode.PERMISSION_DENIED, "This service "
          + "may " + action + " view " + view + " only for a caller the upstream lets create "
          + where + " (--require-write-permission); the upstream refused this caller that "
          + "(CreateNamespace with mode ExistOk answered 403). Ask the upstream's administrator "
          + "for that right, or ask someone who has it to " + action + " the view");
      case FAILED -> throw new ServiceError(503, ErrorCode.SERVICE_UNAVAILABLE, "The upstream "
          + "failed to answer whether this caller may write in " + where + " (CreateNamespace "
          + "with mode ExistOk answered " + c.status() + "); retry later", 5, null);
      default -> throw new ServiceError(502, ErrorCode.SERVICE_UNAVAILABLE, "The upstream "
          + "answered " + c.status() + " to CreateNamespace of " + where + " with mode "
          + "ExistOk, the request that shows this service (--require-write-permission) "
          + "whether a caller may write there; with this upstream the setting cannot be used");
    }
  }

  /** Passes the upstream's refusal (401, 403, 404, ...) on as it is. */
  private static void allowed(Upstream.Check c) {
    if (!c.ok()) {
      throw new Refused(c);
    }
  }

  /** The upstream's own answer, passed on unchanged. */
  static final class Refused extends RuntimeException {
    final Upstream.Check check;

    Refused(Upstream.Check check) {
      super("upstream answered " + check.status(), null, false, false);
      this.check = check;
    }
  }

  private static ServiceError notFoundJob(String jobId, List<String> viewId) {
    return new ServiceError(404, ErrorCode.TABLE_NOT_FOUND, "Job '" + jobId + "' is not a "
        + "refresh of view " + String.join(".", viewId));
  }

  static <T> T parse(byte[] body, Class<T> type, String name) {
    if (body.length == 0) {
      throw ServiceError.badRequest(name + " body is missing");
    }
    try {
      T value = JSON.readValue(body, type);
      if (value == null) {
        throw ServiceError.badRequest(name + " body is null; send a JSON object");
      }
      return value;
    } catch (JsonProcessingException e) {
      throw ServiceError.badRequest("Malformed " + name + ": " + e.getOriginalMessage());
    } catch (java.io.IOException e) {
      throw ServiceError.badRequest("Unreadable " + name + ": " + e.getMessage());
    }
  }

  private static JsonNode tree(byte[] body) {
    if (body.length == 0) {
      return JSON.createObjectNode();
    }
    try {
      JsonNode n = JSON.readTree(body);
      if (!n.isObject()) {
        throw ServiceError.badRequest("The body must be a JSON object");
      }
      return n;
    } catch (JsonProcessingException e) {
      throw ServiceError.badRequest("Malformed JSON body: " + e.getOriginalMessage());
    } catch (java.io.IOException e) {
      throw ServiceError.badRequest("Unreadable JSON body");
    }
  }
}
