package io.lancerest.spark.mv.chunker;

import org.apache.spark.sql.Row;

/**
 * One row a chunker emitted, with the parent it belongs to ({@code sid}); its output values
 * start at {@code offset} (a batch chunker's rows carry the parent's id first).
 */
record ChildRow(long sid, Row row, int offset) {}
