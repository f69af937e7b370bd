package io.lancerest.spark.connector;

import java.util.function.Supplier;

/**
 * A value computed on first use and kept: for work that only some paths need (a table's
 * metadata, a Spark plan) and that must not run twice when several of them do.
 */
public final class Memoized {
  private Memoized() {}

  /** {@code s}, run at most once (thread-safe); its value must not be {@code null}. */
  public static <T> Supplier<T> of(Supplier<T> s) {
    return new Supplier<>() {
      private volatile T value;

      @Override
      public T get() {
        T v = value;
        if (v == null) {
          synchronized (this) {
            if (value == null) {
              value = s.get();
            }
            v = value;
          }
        }
        return v;
      }
    };
  }
}
