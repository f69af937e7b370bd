package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.function.BatchChunker;
import io.lancerest.spark.mv.function.Chunker;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;

/**
 * Chunkers used by the tests. Spark runs in local mode, so tasks share this JVM and the static
 * counters see every call.
 */
public final class TestChunkers {
  private TestChunkers() {}

  /** Calls per source doc text, across all tests of a class (reset by the tests). */
  static final AtomicInteger CALLS = new AtomicInteger();
  static final Map<String, AtomicInteger> FAILURES = new ConcurrentHashMap<>();
  static final AtomicInteger ROWS = new AtomicInteger();
  static volatile int throwAfterRows = Integer.MAX_VALUE;
  static final AtomicInteger ACTIVE = new AtomicInteger();
  static final AtomicInteger MAX_ACTIVE = new AtomicInteger();
  static final List<Integer> BATCH_SIZES = Collections.synchronizedList(new ArrayList<>());
  static final Set<String> THREADS = ConcurrentHashMap.newKeySet();
  /** What {@link Hooked} runs on each call, given the call's number since the last reset. */
  static volatile java.util.function.IntConsumer onCall = n -> { };

  static void reset() {
    CALLS.set(0);
    FAILURES.clear();
    ROWS.set(0);
    throwAfterRows = Integer.MAX_VALUE;
    ACTIVE.set(0);
    MAX_ACTIVE.set(0);
    BATCH_SIZES.clear();
    THREADS.clear();
    onCall = n -> { };
  }

  /** Words; each call runs {@link #onCall} first (a test's CANCEL JOB, or a delay). */
  public static class Hooked implements Chunker {
    private final TextSplitter words = TextSplitter.of(" ", 0, 0);

    @Override
    public Iterator<Row> chunk(Row input) {
      onCall.accept(CALLS.incrementAndGet());
      return words.split(input.getString(0));
    }
  }

  /** Words of the doc, as TextSplitter(separator " ") would; counts calls. */
  public static class Words implements Chunker {
    private final TextSplitter words = TextSplitter.of(" ", 0, 0);

    @Override
    public Iterator<Row> chunk(Row input) {
      CALLS.incrementAndGet();
      return words.split(input.getString(0));
    }
  }

  /**
   * Words, but a doc containing "BOOM" always fails, one containing "FLAKY" fails on its first
   * call, and a doc containing "LATE" fails after emitting its first word.
   */
  public static class Failing implements Chunker {
    private final TextSplitter words = TextSplitter.of(" ", 0, 0);

    @Override
    public Iterator<Row> chunk(Row input) {
      CALLS.incrementAndGet();
      String doc = input.getString(0);
      if (doc != null && doc.contains("BOOM")) {
        throw new IllegalStateException("cannot chunk " + doc);
      }
      if (doc != null && doc.contains("FLAKY")
          && FAILURES.computeIfAbsent(doc, d -> new AtomicInteger()).getAndIncrement() == 0) {
        throw new java.io.UncheckedIOException(new java.io.IOException("timeout on " + doc));
      }
      Iterator<Row> it = words.split(doc);
      if (doc == null || !doc.contains("LATE")) {
        return it;
      }
      return new Iterator<>() {
        int n;

        @Override
        public boolean hasNext() {
          if (n == 1) {
            throw new IllegalStateException("late failure on " + doc);
          }
          return it.hasNext();
        }

        @Override
        public Row next() {
          n++;
          return it.next();
        }
      };
    }
  }

  /** Words, throwing once {@link #throwAfterRows} rows were emitted in this JVM. */
  public static class ThrowAfterN implements Chunker {
    private final TextSplitter words = TextSplitter.of(" ", 0, 0);

    @Override
    public Iterator<Row> chunk(Row input) {
      Iterator<Row> it = words.split(input.getString(0));
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          return it.hasNext();
        }

        @Override
        public Row next() {
          if (ROWS.incrementAndGet() > throwAfterRows) {
            throw new IllegalStateException("injected crash after " + throwAfterRows + " rows");
          }
          return it.next();
        }
      };
    }
  }

  /** Emits a wrong value depending on the doc: "INT" → Integer for the string column. */
  public static class BadOutput implements Chunker {
    @Override
    public Iterator<Row> chunk(Row input) {
      String doc = input.getString(0);
      if (doc.contains("INT")) {
        return List.of(RowFactory.create(42, 0)).iterator();
      }
      if (doc.contains("NULL")) {
        return List.of(RowFactory.create("x", null)).iterator();
      }
      return List.of(RowFactory.create(doc, 0)).iterator();
    }
  }

  /** Words with a random delay per call; records how many calls overlap and on which threads. */
  public static class Slow implements Chunker {
    private final TextSplitter words = TextSplitter.of(" ", 0, 0);

    @Override
    public Iterator<Row> chunk(Row input) {
      int now = ACTIVE.incrementAndGet();
      MAX_ACTIVE.accumulateAndGet(now, Math::max);
      THREADS.add(Thread.currentThread().getName());
      try {
        Thread.sleep(5 + (input.getString(0).hashCode() & 7));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        ACTIVE.decrementAndGet();
      }
      return words.split(input.getString(0));
    }
  }

  /** Batch form of Words; "BOOM" in any doc of a batch fails the whole batch. */
  public static class BatchWords implements BatchChunker {
    private final TextSplitter words = TextSplitter.of(" ", 0, 0);

    @Override
    public Iterator<Row> chunkBatch(List<Row> parents) {
      BATCH_SIZES.add(parents.size());
      List<Row> out = new ArrayList<>();
      // Emit parents in reverse order to show that children may come in any parent order.
      for (int i = parents.size() - 1; i >= 0; i--) {
        Row p = parents.get(i);
        String doc = p.getString(1);
        if (doc != null && doc.contains("BOOM")) {
          throw new IllegalStateException("batch failed on " + p.getLong(0));
        }
        Iterator<Row> it = words.split(doc);
        while (it.hasNext()) {
          Row w = it.next();
          out.add(RowFactory.create(p.getLong(0), w.get(0), w.get(1)));
        }
      }
      return out.iterator();
    }
  }

  /** 10,000 children of 16 Ki characters each for every parent, produced lazily. */
  public static class HugeFanOut implements Chunker {
    @Override
    public Iterator<Row> chunk(Row input) {
      return new Iterator<>() {
        int n;

        @Override
        public boolean hasNext() {
          return n < 10_000;
        }

        @Override
        public Row next() {
          char[] c = new char[16 * 1024];
          java.util.Arrays.fill(c, (char) ('a' + n % 26));
          return RowFactory.create(new String(c), n++);
        }
      };
    }
  }

  /**
   * Words; once 30 rows were emitted in this JVM, creates the file named by system property
   * {@code chunker.marker} and blocks forever (the test then kills the JVM).
   */
  public static class BlockAfter30 implements Chunker {
    private final TextSplitter words = TextSplitter.of(" ", 0, 0);

    @Override
    public Iterator<Row> chunk(Row input) {
      Iterator<Row> it = words.split(input.getString(0));
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          return it.hasNext();
        }

        @Override
        public Row next() {
          if (ROWS.incrementAndGet() == 30) {
            try {
              java.nio.file.Files.createFile(java.nio.file.Path.of(
                  System.getProperty("chunker.marker")));
              Thread.sleep(Long.MAX_VALUE);
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          }
          return it.next();
        }
      };
    }
  }
}
