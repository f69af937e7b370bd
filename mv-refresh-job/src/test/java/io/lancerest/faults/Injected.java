package io.lancerest.faults;

import io.lancerest.spark.mv.chunker.TextSplitter;
import io.lancerest.spark.mv.function.BatchUdtf;
import io.lancerest.spark.mv.function.UdtfContext;
import io.lancerest.spark.mv.udtf.TopKUdtf;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.StructType;

/**
 * Failures injected inside a refresh's Spark tasks, through the functions the views of this
 * suite call: the {@code faults_bang} UDF that every view's SELECT applies to one column (so it
 * runs in the Spark tasks that read the source, outside the view's own function), the chunker
 * {@link Splitter} (a TextSplitter) and the UDTF {@link TopK} (a TopKUdtf). Unarmed they behave exactly like what
 * they wrap, so a view built from scratch with them is the reference result. Armed (local mode:
 * tasks run in this JVM and see these statics) they throw after {@link #after} calls, on every
 * task attempt or only on the first attempt of the first task that gets there.
 */
public final class Injected {
  enum Mode { OFF, ALWAYS, FIRST_ATTEMPT }

  static volatile Mode mode = Mode.OFF;
  static volatile int after;
  /** Only calls whose {@code where} starts with this fail ("" = any). */
  static volatile String only = "";
  static final AtomicInteger CALLS = new AtomicInteger();
  static final AtomicInteger THROWN = new AtomicInteger();
  /** The one (stage, partition) whose first attempt fails in FIRST_ATTEMPT mode. */
  private static volatile String victim;
  /** Chunker/UDTF output faults: "wrong_type" or "null" (unarmed: null). */
  static volatile String badOutput;

  private Injected() {}

  static void arm(Mode m, int afterCalls, String where) {
    only = where;
    CALLS.set(0);
    THROWN.set(0);
    victim = null;
    after = afterCalls;
    mode = m;
  }

  static void disarm() {
    mode = Mode.OFF;
    badOutput = null;
  }

  /**
   * On a cluster (io.lancerest.testing.ClusterSpark), the folder the test shares with the
   * executor JVMs, which do not see this JVM's statics: while file {@code slow-<where>} exists
   * there, each call of {@code where} sleeps {@link #SLOW_MILLIS} and the executor leaves file
   * {@code started-<where>-<its pid>}, so that the test knows whom to kill and when.
   */
  private static final String SIGNALS = System.getProperty("lancerest.test.signals");
  static final long SLOW_MILLIS = 100;

  private static void slowDown(String where) {
    java.nio.file.Path dir = java.nio.file.Path.of(SIGNALS);
    if (!java.nio.file.Files.exists(dir.resolve("slow-" + where))) {
      return;
    }
    try {
      java.nio.file.Path started = dir.resolve("started-" + where + "-"
          + ProcessHandle.current().pid());
      if (!java.nio.file.Files.exists(started)) {
        java.nio.file.Files.writeString(started, "");
      }
      Thread.sleep(SLOW_MILLIS);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Called once per function call inside a task. */
  static void hit(String where) {
    if (SIGNALS != null) {
      slowDown(where);
    }
    Mode m = mode;
    if (m == Mode.OFF || !where.startsWith(only) || CALLS.incrementAndGet() <= after) {
      return;
    }
    TaskContext tc = TaskContext.get();
    if (m == Mode.ALWAYS) {
      THROWN.incrementAndGet();
      throw new IllegalStateException("injected failure in " + where);
    }
    if (tc == null) {
      return;
    }
    String me = tc.stageId() + ":" + tc.partitionId();
    synchronized (Injected.class) {
      if (victim == null && tc.attemptNumber() == 0) {
        victim = me;
      }
    }
    if (me.equals(victim) && tc.attemptNumber() == 0) {
      THROWN.incrementAndGet();
      throw new IllegalStateException("injected failure of task " + me + " attempt 0 in "
          + where);
    }
  }

  /** The query views' expression: {@code concat(name, '!')}, with the injection point. */
  static String bang(String name) {
    hit("faults_bang");
    return name == null ? null : name + "!";
  }

  /** TextSplitter, with the injection point before each parent and an output fault switch. */
  public static final class Splitter extends TextSplitter {
    @Override
    public Iterator<Row> chunk(Row input) {
      hit("chunker");
      Iterator<Row> rows = super.chunk(input);
      String bad = badOutput;
      if (bad == null) {
        return rows;
      }
      return map(rows, r -> RowFactory.create(bad.equals("null") ? null : 42, r.get(1)));
    }
  }

  /** TopKUdtf, failing in the middle of its input when armed, with an output fault switch. */
  public static final class TopK implements BatchUdtf {
    private final TopKUdtf delegate = new TopKUdtf();

    @Override
    public StructType outputSchema(StructType inputSchema, Map<String, String> options) {
      return delegate.outputSchema(inputSchema, options);
    }

    @Override
    public Iterator<Row> process(UdtfContext context, Iterator<Row> rows) throws Exception {
      Iterator<Row> out = delegate.process(context, map(rows, r -> {
        hit("udtf");
        return r;
      }));
      String bad = badOutput;
      return map(out, r -> {
        if (bad == null) {
          return r;
        }
        Object[] v = new Object[r.length()];
        for (int i = 0; i < v.length; i++) {
          v[i] = r.get(i);
        }
        // the last column is the rank, int NOT NULL
        v[v.length - 1] = bad.equals("null") ? null : "first";
        return RowFactory.create(v);
      });
    }
  }

  private static Iterator<Row> map(Iterator<Row> in, java.util.function.UnaryOperator<Row> f) {
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return in.hasNext();
      }

      @Override
      public Row next() {
        if (!in.hasNext()) {
          throw new NoSuchElementException();
        }
        return f.apply(in.next());
      }
    };
  }
}
