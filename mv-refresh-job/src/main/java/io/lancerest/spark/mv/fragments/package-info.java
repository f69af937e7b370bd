/**
 * The change set of a source table since a view's watermark: which fragments the commits
 * touched, and the row ids that left or arrived, from metadata and deletion files rather than
 * scans, which lets an incremental refresh read only the change.
 */
package io.lancerest.spark.mv.fragments;
