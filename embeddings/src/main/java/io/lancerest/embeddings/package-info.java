/**
 * Text embedding functions for computed columns that run inside Spark executors without network
 * (the quantized all-MiniLM-L6-v2 model through ONNX Runtime); an optional module, not in the
 * bundle jar.
 */
package io.lancerest.embeddings;
