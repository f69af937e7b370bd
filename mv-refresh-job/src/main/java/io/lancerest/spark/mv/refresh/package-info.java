/**
 * The one refresh sequence every view kind runs through ({@link RefreshDriver}), and the small
 * interface a kind implements to plug into it ({@link ViewRefresh}).
 */
package io.lancerest.spark.mv.refresh;
