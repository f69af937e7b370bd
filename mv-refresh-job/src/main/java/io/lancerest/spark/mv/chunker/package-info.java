/**
 * Chunker views (1:N): the shipped chunkers ({@link
 * io.lancerest.spark.mv.chunker.TextSplitter}, {@link io.lancerest.spark.mv.chunker.ArraySplitter})
 * over the interfaces in {@code function}, and the incremental refresh engine ({@link
 * io.lancerest.spark.mv.chunker.ChunkerRefresh}) that expands new or changed parents in Spark
 * tasks, streams children into fragments and commits everything once.
 */
package io.lancerest.spark.mv.chunker;
