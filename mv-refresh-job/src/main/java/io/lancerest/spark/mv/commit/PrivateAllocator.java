package io.lancerest.spark.mv.commit;

import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * Runs one commit step on an allocator of its own: lance-core 4.0.0 leaves 128-256 bytes of
 * Arrow C-schema memory unreleased when an Overwrite conflicts or is rolled back, and a caller's
 * allocator would then fail on close. The leak is bounded by the number of failed commits.
 */
final class PrivateAllocator {
  private PrivateAllocator() {}

  static <T> T run(Function<BufferAllocator, T> step) {
    RootAllocator allocator = new RootAllocator();
    try {
      return step.apply(allocator);
    } finally {
      try {
        allocator.close();
      } catch (IllegalStateException leakedByLanceCore) {
        // accounted memory that lance-core did not hand back; nothing to do
      }
    }
  }
}
