package io.lancerest.spark.computed;

import java.io.Serializable;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;

/**
 * A backfill's {@code where}, evaluated in the task on the rows it reads (lance-core gets no
 * filter: an unfiltered fragment scan is linear whatever the fragment's state).
 */
public interface RowCondition extends Serializable {
  /** The table columns the condition reads, in the order of {@link #test}'s row. */
  List<String> columns();

  /** Whether a row (holding {@link #columns()}) matches; NULL does not. */
  boolean test(InternalRow row);
}
