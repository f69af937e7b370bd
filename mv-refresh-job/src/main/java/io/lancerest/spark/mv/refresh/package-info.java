/**
 * The one refresh sequence every view kind runs through ({@link
 * io.lancerest.spark.mv.refresh.RefreshDriver}), and the small interface a kind implements to
 * plug into it ({@link io.lancerest.spark.mv.refresh.ViewRefresh}).
 *
 * <p>The driver owns the steps and every rule they apply, the same for each kind:
 * <ol>
 *   <li><b>Job.</b> The refresh's Spark jobs are tagged and described with its job id and view;
 *       the job log records RUNNING ({@link io.lancerest.spark.mv.refresh.JobTracker}).</li>
 *   <li><b>Open.</b> The view table and the source, each opened once and lent to every later
 *       step; another version of either (the one the view reflects, the one just committed) is
 *       checked out of that open ({@link io.lancerest.spark.mv.refresh.AttemptDatasets}).</li>
 *   <li><b>Target.</b> The view table, read once ({@link
 *       io.lancerest.spark.mv.refresh.ViewRead}); the source version ({@code src_version} or
 *       the latest, which must exist), the version the view reflects, whether the source is still the table the view
 *       was refreshed from, and whether the view is rebuilt ({@code force = true}, or a
 *       replaced source, rebuilt in full whatever its versions): a {@link
 *       io.lancerest.spark.mv.refresh.RefreshTarget}. Otherwise a view never goes back to an
 *       older source version ({@link io.lancerest.spark.mv.refresh.SourceVersions}).</li>
 *   <li><b>Plan</b> (the kind's {@code prepare}): what to recompute at the target version; a
 *       view already there is SKIPPED, nothing committed.</li>
 *   <li><b>Compute</b> (the kind's {@code compute}): the Spark job, its output staged as
 *       uncommitted fragments in the kind's layout, and the skipped work items as staged rows
 *       of the errors table.</li>
 *   <li><b>Commit.</b> A CANCEL JOB is honoured up to here; then one view commit on the view
 *       version the attempt read, then the errors table's rows. A concurrent commit to the view
 *       starts the attempt again from the target.</li>
 *   <li><b>Job record.</b> How the refresh ended, with the same message its caller sees; a
 *       failure of the kind's function reads the same for every kind ({@link
 *       io.lancerest.spark.mv.refresh.TaskFailures}).</li>
 * </ol>
 * A fourth kind writes its plan and its compute (a {@code ViewRefresh} and a {@code ViewKind});
 * the steps above and their rules come with the driver.
 */
package io.lancerest.spark.mv.refresh;
