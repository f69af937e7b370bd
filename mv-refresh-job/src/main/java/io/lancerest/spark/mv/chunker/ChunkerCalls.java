package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.function.BatchChunker;
import io.lancerest.spark.mv.function.Chunker;
import io.lancerest.spark.mv.function.ChunkerContext;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Calls a task's chunker on a unit of parents, one opened instance per calling thread, and tags
 * each row it emits with its parent.
 */
final class ChunkerCalls implements AutoCloseable {
  final FunctionEnvelope function;
  private final String viewName;
  private final StructType inputSchema;
  private final StructType batchInputSchema;
  private final int[] inputPositions;
  private final ChunkerContext context;
  private final List<Object> instances = Collections.synchronizedList(new ArrayList<>());
  private final ThreadLocal<Object> instance = new ThreadLocal<>();

  /** @param inputPositions where each of the chunker's input columns is in a parent row */
  ChunkerCalls(String viewName, FunctionEnvelope function, StructType inputSchema,
      int[] inputPositions) {
    this.viewName = viewName;
    this.function = function;
    this.inputSchema = inputSchema;
    this.inputPositions = inputPositions;
    StructType b = new StructType().add(ChunkerLayout.SOURCE_ROW_ID, DataTypes.LongType, false);
    for (var f : inputSchema.fields()) {
      b = b.add(f);
    }
    batchInputSchema = b;
    StructType output = org.apache.spark.sql.util.LanceArrowUtils.fromArrowSchema(
        function.outputSchema());
    context = new ChunkerContext(viewName, function.batch() ? b : inputSchema, output,
        function.options());
  }

  private Object instance() {
    Object o = instance.get();
    if (o == null) {
      o = ChunkerFunctions.instantiate(function.className(), function.batch(), viewName);
      if (o instanceof Chunker c) {
        c.open(context);
      } else {
        ((BatchChunker) o).open(context);
      }
      instances.add(o);
      instance.set(o);
    }
    return o;
  }

  private Row inputRow(Row parent) {
    Object[] v = new Object[inputPositions.length];
    for (int i = 0; i < v.length; i++) {
      v[i] = parent.get(inputPositions[i]);
    }
    return new GenericRowWithSchema(v, inputSchema);
  }

  /** The children of {@code u}, as the chunker emits them (on the calling thread). */
  Iterator<ChildRow> call(WorkUnit u) {
    Object fn = instance();
    if (!u.batch()) {
      long sid = u.firstSid();
      Iterator<Row> out = ((Chunker) fn).chunk(inputRow(u.parents().get(0)));
      if (out == null) {
        return Collections.emptyIterator();
      }
      return map(out, r -> new ChildRow(sid, r, 0));
    }
    List<Row> in = new ArrayList<>(u.parents().size());
    for (Row p : u.parents()) {
      Object[] v = new Object[inputPositions.length + 1];
      v[0] = p.getLong(0);
      for (int i = 0; i < inputPositions.length; i++) {
        v[i + 1] = p.get(inputPositions[i]);
      }
      in.add(new GenericRowWithSchema(v, batchInputSchema));
    }
    Iterator<Row> out = ((BatchChunker) fn).chunkBatch(in);
    if (out == null) {
      return Collections.emptyIterator();
    }
    return map(out, r -> {
      Object sid = r == null || r.length() == 0 ? null : r.get(0);
      if (!(sid instanceof Long id)) {
        throw new ChunkerOutputException(ChunkerLayout.SOURCE_ROW_ID, "Batch chunker '"
            + function.name() + "' returned a row whose field 0 is " + (sid == null ? "null"
            : "a " + sid.getClass().getName()) + "; it must be the parent's "
            + ChunkerLayout.SOURCE_ROW_ID + " (a Long)");
      }
      return new ChildRow(id, r, 1);
    });
  }

  private static Iterator<ChildRow> map(Iterator<Row> rows,
      java.util.function.Function<Row, ChildRow> f) {
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return rows.hasNext();
      }

      @Override
      public ChildRow next() {
        return f.apply(rows.next());
      }
    };
  }

  /** Closes every instance opened; the first failure is thrown once all are closed. */
  @Override
  public void close() {
    RuntimeException first = null;
    for (Object o : instances) {
      try {
        if (o instanceof Chunker c) {
          c.close();
        } else {
          ((BatchChunker) o).close();
        }
      } catch (RuntimeException e) {
        first = first == null ? e : first;
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
