/**
 * What keeps a view table small over thousands of refreshes: compaction of its fragments and
 * removal of old versions, by a policy, after a refresh commit or on demand.
 */
package io.lancerest.spark.mv.maintenance;
