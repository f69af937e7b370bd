package io.lancerest.spark.mv.query;

import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.when;

import io.lancerest.spark.mv.definition.Aggregation;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.layout.GenevaLayout;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The per-group state of an aggregate view and how rows change it, as Spark columns.
 *
 * <p>Every group keeps, in hidden view columns: {@value #ROWS} (its rows), and for each aggregate
 * {@code i} with an argument {@code __agg_<i>_n} (its non-NULL values) and, for sum and avg,
 * {@code __agg_<i>_sum} (their running sum, of the type Spark's own sum or avg adds in: bigint
 * for whole numbers' sum, double for avg and floating sums, decimal(p+10, s) for decimals). A
 * row that arrives adds to its group's state, a row that leaves subtracts; min and max keep
 * their value and are only ever lowered / raised by arriving rows, so a group whose departing
 * row held its extreme, and no arriving row reached it, is recomputed from its rows ({@link
 * #merge}).
 *
 * <p>The view's value columns are computed from the state as Spark computes them from its
 * buffers: count = the count; sum = NULL when no value was non-NULL, else the sum; avg = sum
 * / count in double, or for decimals the decimal division cast to decimal(p+4, s+4).
 */
final class AggregateState {
  static final String ROWS = io.lancerest.spark.catalog.ViewTableLayout.AGGREGATE_ROWS;
  /** Cancellation beyond 2^20 (a million-fold) in a floating sum makes the group recompute. */
  static final double DRIFT = 1L << 20;

  private final SourceQuery q;
  private final Aggregation agg;
  /** The type of each aggregate's argument over the source ({@code null} for count(*)). */
  private final DataType[] argTypes;

  private AggregateState(SourceQuery q, DataType[] argTypes) {
    this.q = q;
    this.agg = q.aggregation();
    this.argTypes = argTypes;
  }

  /** The state of {@code q} over {@code source}, whose columns give the arguments' types. */
  static AggregateState of(SourceQuery q, Dataset<Row> source, String viewName) {
    Aggregation a = q.aggregation();
    List<Column> args = new ArrayList<>();
    for (Aggregation.Call c : a.aggregates()) {
      args.add(c.arg() == null ? lit(1) : expr(c.arg()));
    }
    StructType types;
    try {
      types = QueryLayout.filtered(source, q).select(args.toArray(new Column[0])).schema();
    } catch (RuntimeException e) {
      throw new InvalidViewDefinitionException("The definition of view " + viewName
          + " no longer applies to its source table (" + e.getMessage().lines().findFirst()
          .orElse("") + "); the source's columns changed. Re-create the view", e);
    }
    DataType[] out = new DataType[a.aggregates().size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = a.aggregates().get(i).arg() == null ? null : types.fields()[i].dataType();
    }
    return new AggregateState(q, out);
  }

  static String count(int i) {
    return Aggregation.HIDDEN_PREFIX + i + "_n";
  }

  static String sum(int i) {
    return Aggregation.HIDDEN_PREFIX + i + "_sum";
  }

  static String key(int j) {
    return "__g" + j;
  }

  Aggregation.Call call(int i) {
    return agg.aggregates().get(i);
  }

  int calls() {
    return agg.aggregates().size();
  }

  /** The type the running sum of aggregate {@code i} is kept in. */
  DataType sumType(int i) {
    DataType t = argTypes[i];
    if (t instanceof DecimalType d) {
      return DecimalType.apply(Math.min(38, d.precision() + 10), d.scale());
    }
    if (call(i).fn() == Aggregation.Function.AVG || t instanceof DoubleType
        || t instanceof FloatType) {
      return DataTypes.DoubleType;
    }
    return DataTypes.LongType;
  }

  boolean floatingSum(int i) {
    return call(i).keepsSum() && sumType(i) instanceof DoubleType;
  }

  /**
   * The filtered rows of {@code source} as changes: the keys, {@code __sign} (+1 a row that
   * arrives, -1 one that leaves) and each aggregate's argument ({@code __a<i>}).
   */
  Dataset<Row> changes(Dataset<Row> source, int sign) {
    List<Column> cols = new ArrayList<>();
    for (int j = 0; j < agg.groupBy().size(); j++) {
      cols.add(expr(agg.groupBy().get(j).expr()).as(key(j)));
    }
    cols.add(lit(sign).as("__sign"));
    for (int i = 0; i < calls(); i++) {
      if (call(i).arg() != null) {
        Column a = expr(call(i).arg());
        cols.add((call(i).keepsSum() ? a.cast(sumType(i)) : a).as("__a" + i));
      }
    }
    return QueryLayout.filtered(source, q).select(cols.toArray(new Column[0]));
  }

  /** The changes summed per group: the state change of each group they touch. */
  Dataset<Row> delta(Dataset<Row> changes) {
    return delta(changes, false);
  }

  /**
   * The state of every group of {@code arrivals} (rows that all arrive): {@link #delta} without
   * what only departing rows need, as cheap as Spark's own aggregate of the same rows.
   */
  Dataset<Row> totals(Dataset<Row> arrivals) {
    return complete(delta(arrivals, true));
  }

  private Dataset<Row> delta(Dataset<Row> changes, boolean arrivalsOnly) {
    Column sign = col("__sign");
    Column arrives = sign.gt(0);
    List<Column> aggs = new ArrayList<>();
    aggs.add((arrivalsOnly ? functions.count(lit(1)) : functions.sum(sign)).as("__d_rows"));
    for (int i = 0; i < calls(); i++) {
      Aggregation.Call c = call(i);
      if (c.arg() == null) {
        continue;
      }
      Column a = col("__a" + i);
      aggs.add((arrivalsOnly ? functions.count(a)
          : functions.sum(when(a.isNotNull(), sign).otherwise(0))).as("__d_n" + i));
      switch (c.fn()) {
        case SUM, AVG -> {
          aggs.add(functions.sum(arrivalsOnly ? a : when(arrives, a)
              .otherwise(functions.negate(a))).as("__d_s" + i));
          if (sumType(i) instanceof DecimalType && !arrivalsOnly) {
            // tells a change whose sum overflowed (NULL) from one without values
            aggs.add(functions.count(a).as("__d_any" + i));
          }
          if (floatingSum(i) && !arrivalsOnly) {
            aggs.add(functions.sum(functions.abs(a)).as("__d_abs" + i));
            aggs.add(functions.max(when(arrives.unary_$bang().and(notFinite(a)), 1)
                .otherwise(0)).as("__d_bad" + i));
          }
        }
        case MIN -> {
          aggs.add(functions.min(arrivalsOnly ? a : when(arrives, a)).as("__d_add" + i));
          if (!arrivalsOnly) {
            aggs.add(functions.min(when(arrives.unary_$bang(), a)).as("__d_rem" + i));
          }
        }
        case MAX -> {
          aggs.add(functions.max(arrivalsOnly ? a : when(arrives, a)).as("__d_add" + i));
          if (!arrivalsOnly) {
            aggs.add(functions.max(when(arrives.unary_$bang(), a)).as("__d_rem" + i));
          }
        }
        default -> { }
      }
    }
    Column[] keys = keyColumns();
    Column first = aggs.remove(0);
    return keys.length == 0
        ? changes.agg(first, aggs.toArray(new Column[0]))
        : changes.groupBy(keys).agg(first, aggs.toArray(new Column[0]));
  }

  private Column[] keyColumns() {
    Column[] keys = new Column[agg.groupBy().size()];
    for (int j = 0; j < keys.length; j++) {
      keys[j] = col(key(j));
    }
    return keys;
  }

  private static Column notFinite(Column a) {
    return functions.isnan(a).or(functions.abs(a).equalTo(lit(Double.POSITIVE_INFINITY)));
  }

  /**
   * A delta taken over every row of its groups, as state: what a rebuild writes, and what a
   * recomputed group gets.
   */
  Dataset<Row> complete(Dataset<Row> delta) {
    List<Column> cols = new ArrayList<>();
    for (Column k : keyColumns()) {
      cols.add(k);
    }
    // coalesced: a grand total (no GROUP BY) over no rows is one row of NULL sums
    cols.add(coalesce(col("__d_rows"), lit(0L)).as("__rows"));
    for (int i = 0; i < calls(); i++) {
      Aggregation.Call c = call(i);
      if (c.arg() == null) {
        continue;
      }
      cols.add(coalesce(col("__d_n" + i), lit(0L)).as("__n" + i));
      if (c.keepsSum()) {
        // 0 for a group with no value (Spark's sum is NULL then, and so is the view's); a
        // decimal sum that overflowed stays NULL, as Spark's does
        cols.add(when(col("__n" + i).equalTo(0L), lit(0).cast(sumType(i)))
            .otherwise(col("__d_s" + i).cast(sumType(i))).as("__s" + i));
      } else if (c.fn() != Aggregation.Function.COUNT) {
        cols.add(col("__d_add" + i).as("__x" + i));
      }
    }
    cols.add(lit(false).as("__recompute"));
    cols.add(lit(null).cast(DataTypes.LongType).as("__v_addr"));
    return delta.select(cols.toArray(new Column[0]));
  }

  /**
   * The view's rows of the groups {@code delta} touches joined with it: their new state, the
   * address of their current view row ({@code __v_addr}, NULL for a group not in the view) and
   * whether the state cannot tell the new values ({@code __recompute}).
   *
   * @param view the view table with {@code _rowaddr}
   */
  Dataset<Row> merge(Dataset<Row> delta, Dataset<Row> view) {
    List<Column> vcols = new ArrayList<>();
    vcols.add(col("_rowaddr").as("__v_addr"));
    for (int j = 0; j < agg.groupBy().size(); j++) {
      vcols.add(col(quoted(agg.groupBy().get(j).name())).as("__vk" + j));
    }
    vcols.add(col(ROWS).as("__v_rows"));
    for (int i = 0; i < calls(); i++) {
      Aggregation.Call c = call(i);
      if (c.arg() == null) {
        continue;
      }
      vcols.add(col(count(i)).as("__v_n" + i));
      if (c.keepsSum()) {
        vcols.add(col(sum(i)).as("__v_s" + i));
      } else if (c.fn() != Aggregation.Function.COUNT) {
        vcols.add(col(quoted(c.name())).as("__v_x" + i));
      }
    }
    Dataset<Row> v = view.select(vcols.toArray(new Column[0]));
    Column on = lit(true);
    for (int j = 0; j < agg.groupBy().size(); j++) {
      on = on.and(col(key(j)).eqNullSafe(col("__vk" + j)));
    }
    Dataset<Row> joined = delta.join(v, on, "left");
    Column present = col("__v_addr").isNotNull();
    List<Column> cols = new ArrayList<>();
    for (Column k : keyColumns()) {
      cols.add(k);
    }
    Column rows = coalesce(col("__v_rows"), lit(0L)).plus(coalesce(col("__d_rows"), lit(0L)));
    cols.add(rows.as("__rows"));
    // A group not in the view is new, unless HAVING hid it or rows left it: then only its
    // rows can tell its state.
    Column recompute = present.unary_$bang().and(agg.having() != null
        ? lit(true) : coalesce(col("__d_rows"), lit(0L)).leq(0));
    for (int i = 0; i < calls(); i++) {
      Aggregation.Call c = call(i);
      if (c.arg() == null) {
        continue;
      }
      Column n = coalesce(col("__v_n" + i), lit(0L)).plus(coalesce(col("__d_n" + i), lit(0L)));
      cols.add(n.as("__n" + i));
      if (c.keepsSum()) {
        Column old = col("__v_s" + i);
        Column zero = lit(0).cast(sumType(i));
        Column s = AggregateArithmetic.add(sumType(i), coalesce(old, zero),
            coalesce(col("__d_s" + i), zero));
        if (sumType(i) instanceof DecimalType) {
          // the change's own sum overflowed decimal(38): so did the group's
          s = when(col("__d_s" + i).isNull().and(col("__d_any" + i).gt(0)),
              lit(null).cast(sumType(i))).otherwise(s);
        }
        // A group left with no value keeps exactly 0, not what rounding left of its sum.
        cols.add(when(n.equalTo(0L), zero).otherwise(s).cast(sumType(i)).as("__s" + i));
        if (sumType(i) instanceof DecimalType) {
          // A decimal sum that overflowed is NULL (as Spark's is): the group's rows must tell
          // its sum once values leave it.
          recompute = recompute.or(present.and(n.gt(0)).and(old.isNull()
              .and(col("__v_n" + i).gt(0)).or(s.isNull())));
        }
        if (floatingSum(i)) {
          // Sums of doubles are exact only up to their rounding: subtracting a departed value
          // from a sum that is much larger than what remains, or from a sum a NaN or an
          // infinity reached, leaves an error Spark's own sum of the rows would not have.
          Column drift = col("__d_bad" + i).gt(0).or(notFinite(old))
              .or(functions.abs(s).multiply(DRIFT)
                  .lt(functions.abs(old).plus(col("__d_abs" + i))));
          // (no earlier sum: nothing to drift from)
          recompute = recompute.or(present.and(n.gt(0)).and(coalesce(drift, lit(false))));
        }
      } else if (c.fn() == Aggregation.Function.MIN || c.fn() == Aggregation.Function.MAX) {
        boolean min = c.fn() == Aggregation.Function.MIN;
        Column old = col("__v_x" + i);
        Column added = col("__d_add" + i);
        Column removed = col("__d_rem" + i);
        cols.add((min ? functions.least(old, added) : functions.greatest(old, added))
            .as("__x" + i));
        // The departing value may have been the group's extreme: only its rows can tell,
        // unless an arriving value reaches the old extreme (an UPDATE that raised the max):
        // then the new extreme is the arriving one.
        Column held = min ? removed.leq(old) : removed.geq(old);
        Column covered = coalesce(min ? added.leq(old) : added.geq(old), lit(false));
        recompute = recompute.or(present.and(n.gt(0)).and(removed.isNotNull())
            .and(old.isNull().or(held.and(covered.unary_$bang()))));
      }
    }
    cols.add(coalesce(recompute, lit(false)).as("__recompute"));
    cols.add(col("__v_addr"));
    return joined.select(cols.toArray(new Column[0]));
  }

  /**
   * The view rows of {@code state} (rows of {@link #complete} or {@link #merge}): groups with
   * rows left that pass HAVING, in the view's columns and types ({@code target}).
   */
  Dataset<Row> viewRows(Dataset<Row> state, StructType target) {
    // A group whose rows all left is gone; a grand total (no GROUP BY) is one row always, as
    // in Spark.
    Dataset<Row> live = agg.groupBy().isEmpty() ? state : state.where(col("__rows").gt(0));
    List<String> keys = new ArrayList<>();
    for (SourceQuery.OutputColumn k : agg.groupBy()) {
      keys.add(quoted(k.name()));
    }
    Dataset<Row> rows = live.select(named());
    if (agg.having() != null) {
      rows = rows.where(expr(agg.having()));
    }
    List<Column> out = new ArrayList<>();
    for (StructField f : target.fields()) {
      String n = f.name();
      Column c;
      if (n.equals(GenevaLayout.SOURCE_ROW_ID)) {
        c = keys.isEmpty() ? lit(0L) : functions.xxhash64(
            keys.stream().map(functions::col).toArray(Column[]::new));
      } else if (n.equals(GenevaLayout.IS_SET)) {
        c = lit(true);
      } else {
        c = col(quoted(n));
      }
      out.add(c.cast(f.dataType()).as(n));
    }
    return rows.select(out.toArray(new Column[0]));
  }

  /** Aggregate {@code i}'s value from the state, as Spark evaluates it from its buffer. */
  private Column value(int i) {
    Aggregation.Call c = call(i);
    if (c.arg() == null) {
      return col("__rows");
    }
    Column n = col("__n" + i);
    Column none = n.equalTo(0L);
    switch (c.fn()) {
      case COUNT:
        return n;
      case SUM:
        return when(none, lit(null)).otherwise(col("__s" + i));
      case AVG:
        if (argTypes[i] instanceof DecimalType d) {
          DecimalType result = DecimalType.apply(Math.min(38, d.precision() + 4),
              Math.min(38, d.scale() + 4));
          int scale = result.scale();
          int precision = result.precision();
          return when(none, lit(null)).otherwise(functions.udf(
              (org.apache.spark.sql.api.java.UDF2<java.math.BigDecimal, Long,
                  java.math.BigDecimal>) (sum, count) -> AggregateArithmetic.decimalAverage(sum, count,
                  precision, scale), result).apply(col("__s" + i), n));
        }
        return when(none, lit(null)).otherwise(col("__s" + i).divide(n.cast(
            DataTypes.DoubleType)));
      default:
        return when(none, lit(null)).otherwise(col("__x" + i));
    }
  }

  /**
   * The view table's columns: {@code __source_row_id} (a hash of the group's keys), {@code
   * __is_set}, the SELECT's columns in order, then the hidden ones: keys and aggregates the
   * SELECT does not show, {@value #ROWS}, and each aggregate's count and sum.
   */
  StructType viewSchema(Dataset<Row> source) {
    StructType computed = totals(changes(source, 1)).limit(0).select(named()).schema();
    List<StructField> fields = new ArrayList<>();
    fields.add(DataTypes.createStructField(GenevaLayout.SOURCE_ROW_ID, DataTypes.LongType,
        false));
    fields.add(DataTypes.createStructField(GenevaLayout.IS_SET, DataTypes.BooleanType, false));
    List<String> names = columnNames();
    for (String n : names.subList(2, names.size())) {
      boolean notNull = n.equals(ROWS) || n.startsWith(Aggregation.HIDDEN_PREFIX)
          && n.endsWith("_n");
      fields.add(DataTypes.createStructField(n, computed.apply(n).dataType(), !notNull));
    }
    return DataTypes.createStructType(fields);
  }

  /**
   * The view table's column names, in order ({@link #viewSchema}), from the definition alone:
   * a refresh checks the table against them without analysing a plan.
   */
  List<String> columnNames() {
    List<String> order = new ArrayList<>(List.of(GenevaLayout.SOURCE_ROW_ID,
        GenevaLayout.IS_SET));
    for (SourceQuery.OutputColumn c : q.projection()) {
      order.add(c.name());
    }
    for (SourceQuery.OutputColumn k : agg.groupBy()) {
      if (!order.contains(k.name())) {
        order.add(k.name());
      }
    }
    for (Aggregation.Call c : agg.aggregates()) {
      if (!order.contains(c.name())) {
        order.add(c.name());
      }
    }
    order.add(ROWS);
    for (int i = 0; i < calls(); i++) {
      if (call(i).arg() != null) {
        order.add(count(i));
        if (call(i).keepsSum()) {
          order.add(sum(i));
        }
      }
    }
    return order;
  }

  /** The state's columns under the view's names: keys, values, then the hidden state. */
  private Column[] named() {
    List<Column> named = new ArrayList<>();
    for (int j = 0; j < agg.groupBy().size(); j++) {
      named.add(col(key(j)).as(agg.groupBy().get(j).name()));
    }
    for (int i = 0; i < calls(); i++) {
      named.add(value(i).as(call(i).name()));
    }
    named.add(col("__rows").as(ROWS));
    for (int i = 0; i < calls(); i++) {
      if (call(i).arg() != null) {
        named.add(col("__n" + i).as(count(i)));
        if (call(i).keepsSum()) {
          named.add(col("__s" + i).as(sum(i)));
        }
      }
    }
    return named.toArray(new Column[0]);
  }

  static String quoted(String name) {
    return "`" + name.replace("`", "``") + "`";
  }
}
