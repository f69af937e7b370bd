/**
 * The one refresh sequence every view kind runs through ({@link RefreshDriver}), the small
 * interface a kind implements to plug into it ({@link ViewRefresh}), and how the driver records
 * the refresh's job ({@link JobTracker} over a {@link JobLog} the engine provides).
 */
package io.lancerest.spark.mv.refresh;
