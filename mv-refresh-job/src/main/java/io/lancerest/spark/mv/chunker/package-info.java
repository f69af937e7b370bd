/**
 * Chunker views (1:N): the public function interfaces ({@link
 * io.lancerest.spark.mv.chunker.Chunker}, {@link io.lancerest.spark.mv.chunker.BatchChunker}),
 * the shipped chunkers, and the incremental refresh engine ({@link
 * io.lancerest.spark.mv.chunker.ChunkerRefresh}) that expands new or changed parents in Spark
 * tasks, streams children into fragments and commits everything once.
 */
package io.lancerest.spark.mv.chunker;
