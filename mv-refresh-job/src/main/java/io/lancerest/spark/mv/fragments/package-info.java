/**
 * Which source fragments changed between two versions of a Lance table, and the live row ids
 * of those that did: what lets an incremental refresh read only the change.
 */
package io.lancerest.spark.mv.fragments;
