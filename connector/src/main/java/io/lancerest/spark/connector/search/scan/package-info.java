/**
 * A search as a Spark read: one input partition that runs the whole search in one task (top k is
 * global), opened with the table's read options as the catalog's scans open it, its plan node
 * saying what the search uses.
 */
package io.lancerest.spark.connector.search.scan;
