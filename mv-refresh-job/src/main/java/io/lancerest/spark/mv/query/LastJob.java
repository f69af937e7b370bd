package io.lancerest.spark.mv.query;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.lancerest.client.LanceJson;
import io.lancerest.spark.mv.MaterializedViewKind;
import java.util.LinkedHashMap;
import java.util.Map;

/** The {@code lancerest::view::last_job} JSON recorded with a refresh's commit. */
public final class LastJob {
  private LastJob() {}

  public static String json(String jobId, String status, MaterializedViewKind kind,
      long sourceVersion, long rowsInserted, long rowsDeleted, long finishedAtMs) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("job_id", jobId);
    m.put("status", status);
    m.put("kind", kind.wire());
    m.put("source_version", sourceVersion);
    m.put("rows_inserted", rowsInserted);
    m.put("rows_deleted", rowsDeleted);
    m.put("finished_at_ms", finishedAtMs);
    try {
      return LanceJson.mapper().writeValueAsString(m);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
