/**
 * Benchmarks that print ratios against a peer measured in the same run (lance-spark's own
 * catalog, a CTAS or a plain Spark job doing the same work); {@code BenchmarkSuite} runs them.
 * Several also draw their figures as PNG charts into docs/img ({@code Charts}).
 */
package io.lancerest.examples.bench;
