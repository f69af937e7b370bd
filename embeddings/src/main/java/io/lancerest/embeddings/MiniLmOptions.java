package io.lancerest.embeddings;

import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.function.OptionValues;
import java.util.Map;
import java.util.Set;

/**
 * The options of {@link MiniLmEmbedding}, read and checked once.
 *
 * @param threads ONNX Runtime intra-op threads per model call
 * @param normalize whether vectors are scaled to unit length
 */
record MiniLmOptions(int threads, boolean normalize) {
  static final String THREADS = "threads";
  static final String NORMALIZE = "normalize";
  private static final Set<String> KNOWN = Set.of(THREADS, NORMALIZE);

  /**
   * One thread per call: Spark already runs one task per executor core, and those tasks call the
   * shared instance concurrently, so more intra-op threads would only oversubscribe the cores.
   */
  static final int DEFAULT_THREADS = 1;
  /** An upper bound that catches a typo (a 1000-thread pool per call), not a tuning limit. */
  static final int MAX_THREADS = 256;

  static MiniLmOptions parse(Map<String, String> options) {
    OptionValues.onlyKnown(options, MiniLmEmbedding.NAME, KNOWN);
    String allowedThreads = "a whole number from 1 to " + MAX_THREADS
        + " (ONNX Runtime threads per model call; default " + DEFAULT_THREADS + ")";
    Integer threads = OptionValues.wholeNumber(options, THREADS, 1, allowedThreads);
    if (threads != null && threads > MAX_THREADS) {
      throw new InvalidOptionException(THREADS, options.get(THREADS), allowedThreads);
    }
    Boolean normalize = OptionValues.bool(options, NORMALIZE);
    return new MiniLmOptions(threads == null ? DEFAULT_THREADS : threads,
        normalize == null || normalize);
  }
}
