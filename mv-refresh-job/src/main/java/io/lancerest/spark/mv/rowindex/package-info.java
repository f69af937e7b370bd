/**
 * Which view rows hold which source rows: each fragment's source row id range and index,
 * written with the fragment, and the lookup by which a refresh finds the rows to delete.
 */
package io.lancerest.spark.mv.rowindex;
