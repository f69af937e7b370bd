/**
 * The interfaces users implement for function views ({@link
 * io.lancerest.spark.mv.function.Chunker}, {@link io.lancerest.spark.mv.function.BatchChunker},
 * {@link io.lancerest.spark.mv.function.BatchUdtf}), the context each call receives, and {@link
 * io.lancerest.spark.mv.function.OptionValues} for reading their {@code OPTIONS}.
 */
package io.lancerest.spark.mv.function;
