package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.mv.result.JobRecord;
import java.util.List;

/**
 * Where the states of refresh jobs are recorded. The driver only appends; where the log lives
 * (a table of the catalog's server) is the engine's business. An append may throw: its callers
 * ({@link JobTracker}) log the failure and the refresh goes on, since the view commit, not the
 * log, decides a refresh's fate.
 */
public interface JobLog {
  /** Records nothing. */
  JobLog NONE = records -> { };

  /** Appends these states (of one or several jobs) in one write. */
  void append(List<JobRecord> records);
}
