package io.lancerest.spark.mv.query;

import io.lancerest.spark.mv.definition.Aggregation;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegralType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * An aggregate view's change set merged into the groups it touches, on the driver: the rows
 * {@link AggregateState#merge} gives (keys, new state, {@code __recompute}, {@code __v_addr}),
 * computed from rows the driver already holds, for a change set so small that the Spark jobs
 * of the merge would be most of the refresh.
 *
 * <p>It follows {@link AggregateState#delta} and {@link AggregateState#merge} rule for rule, in
 * Spark's arithmetic: whole-number sums wrap as Spark's non-ANSI sum does, decimal sums are
 * exact and NULL beyond their precision, floats order as Spark orders them (NaN above all, -0.0
 * equal to 0.0), strings by their UTF-8 bytes. What it cannot do exactly as Spark, it declines
 * ({@link #declines}): ANSI mode, keys of binary or nested types, min and max of types whose
 * order it does not hold. The caller then runs the Spark merge.
 */
final class LocalAggregateMerge {
  private final AggregateState st;
  private final Aggregation agg;
  private final int keys;
  /** Per aggregate with an argument, its column in the change rows; -1 for count(*). */
  private final int[] argAt;

  private LocalAggregateMerge(AggregateState st, Aggregation agg, StructType changes) {
    this.st = st;
    this.agg = agg;
    this.keys = agg.groupBy().size();
    this.argAt = new int[st.calls()];
    for (int i = 0; i < argAt.length; i++) {
      argAt[i] = st.call(i).arg() == null ? -1 : changes.fieldIndex("__a" + i);
    }
  }

  /**
   * Why the merge of {@code changes} (rows of {@link AggregateState#changes}) cannot run on the
   * driver, or {@code null} when it can.
   */
  static String declines(AggregateState st, Aggregation agg, StructType changes, boolean ansi,
      StructType view) {
    if (ansi) {
      return "ANSI mode (an overflow must fail as Spark's sum fails)";
    }
    for (int j = 0; j < agg.groupBy().size(); j++) {
      DataType t = changes.fields()[j].dataType();
      String name = agg.groupBy().get(j).name();
      if (!ordered(t)) {
        return "group key " + name + " is of type " + t.simpleString();
      }
      if (!view.apply(name).dataType().equals(t)) {
        // the view's keys are matched by Java equality, which does not convert types
        return "group key " + name + " is a " + t.simpleString() + " in the source and a "
            + view.apply(name).dataType().simpleString() + " in the view";
      }
    }
    for (int i = 0; i < st.calls(); i++) {
      Aggregation.Function fn = st.call(i).fn();
      if (fn == Aggregation.Function.MIN || fn == Aggregation.Function.MAX) {
        DataType t = changes.apply("__a" + i).dataType();
        if (!ordered(t)) {
          return st.call(i).name() + " takes the " + fn.wire() + " of a " + t.simpleString();
        }
        if (!view.apply(st.call(i).name()).dataType().equals(t)) {
          return st.call(i).name() + " is a " + t.simpleString() + " in the source and a "
              + view.apply(st.call(i).name()).dataType().simpleString() + " in the view";
        }
      }
    }
    return null;
  }

  private static boolean ordered(DataType t) {
    return t instanceof IntegralType || t instanceof FloatType || t instanceof DoubleType
        || t instanceof DecimalType || t instanceof StringType || t instanceof BooleanType
        || t instanceof DateType || t instanceof TimestampType || t instanceof TimestampNTZType;
  }

  /** The columns of {@link #merge}'s rows, named as {@link AggregateState#merge} names them. */
  static StructType schema(AggregateState st, Aggregation agg, StructType changes) {
    List<StructField> f = new ArrayList<>();
    for (int j = 0; j < agg.groupBy().size(); j++) {
      f.add(DataTypes.createStructField(AggregateState.key(j), changes.fields()[j].dataType(),
          true));
    }
    f.add(DataTypes.createStructField("__rows", DataTypes.LongType, false));
    for (int i = 0; i < st.calls(); i++) {
      Aggregation.Call c = st.call(i);
      if (c.arg() == null) {
        continue;
      }
      f.add(DataTypes.createStructField("__n" + i, DataTypes.LongType, false));
      if (c.keepsSum()) {
        f.add(DataTypes.createStructField("__s" + i, st.sumType(i), true));
      } else if (c.fn() != Aggregation.Function.COUNT) {
        f.add(DataTypes.createStructField("__x" + i, changes.apply("__a" + i).dataType(),
            true));
      }
    }
    f.add(DataTypes.createStructField("__recompute", DataTypes.BooleanType, false));
    f.add(DataTypes.createStructField("__v_addr", DataTypes.LongType, true));
    return DataTypes.createStructType(f);
  }

  /**
   * The touched groups' new state.
   *
   * @param arrived rows of {@link AggregateState#changes} that arrive
   * @param departed rows of {@link AggregateState#changes} that depart (their {@code __sign}
   *     is not read)
   * @param view the view's rows: {@code viewSchema}'s columns, its last the row address
   */
  static List<Row> merge(AggregateState st, Aggregation agg, StructType changesSchema,
      List<Row> arrived, List<Row> departed, StructType viewSchema, List<Row> view) {
    LocalAggregateMerge m = new LocalAggregateMerge(st, agg, changesSchema);
    Map<List<Object>, Group> groups = new LinkedHashMap<>();
    m.add(groups, arrived, true);
    m.add(groups, departed, false);
    return m.merge(groups, viewSchema, view);
  }

  private void add(Map<List<Object>, Group> groups, List<Row> changes, boolean arrive) {
    for (Row r : changes) {
      Object[] k = new Object[keys];
      for (int j = 0; j < keys; j++) {
        k[j] = normalized(r.get(j));
      }
      groups.computeIfAbsent(Arrays.asList(k), x -> new Group(k, argAt.length)).add(r, arrive);
    }
  }

  private List<Row> merge(Map<List<Object>, Group> groups, StructType viewSchema,
      List<Row> view) {
    int[] viewKeys = new int[keys];
    for (int j = 0; j < keys; j++) {
      viewKeys[j] = viewSchema.fieldIndex(agg.groupBy().get(j).name());
    }
    int address = viewSchema.size() - 1;
    for (Row v : view) {
      Object[] k = new Object[keys];
      for (int j = 0; j < keys; j++) {
        k[j] = normalized(v.get(viewKeys[j]));
      }
      Group g = groups.get(Arrays.asList(k));
      if (g != null) {
        g.view = v;
        g.address = v.getLong(address);
      }
    }
    List<Row> out = new ArrayList<>(groups.size());
    for (Group g : groups.values()) {
      out.add(g.merged(viewSchema));
    }
    return out;
  }

  /** A key as Spark groups and joins it: -0.0 is 0.0 (NaN is one value to {@code equals}). */
  private static Object normalized(Object v) {
    if (v instanceof Double d && d == 0.0d) {
      return 0.0d;
    }
    if (v instanceof Float f && f == 0.0f) {
      return 0.0f;
    }
    return v;
  }

  /** The change of one group, then its merge with its view row. */
  private final class Group {
    final Object[] key;
    long rows;
    final long[] n;
    final Object[] sum;
    final Double[] abs;
    final boolean[] bad;
    final Object[] added;
    final Object[] removed;
    Row view;
    Long address;

    Group(Object[] key, int calls) {
      this.key = key;
      n = new long[calls];
      sum = new Object[calls];
      abs = new Double[calls];
      bad = new boolean[calls];
      added = new Object[calls];
      removed = new Object[calls];
    }

    void add(Row r, boolean arrives) {
      rows += arrives ? 1 : -1;
      for (int i = 0; i < argAt.length; i++) {
        if (argAt[i] < 0 || r.isNullAt(argAt[i])) {
          continue;
        }
        Object a = r.get(argAt[i]);
        n[i] += arrives ? 1 : -1;
        switch (st.call(i).fn()) {
          case SUM, AVG -> {
            sum[i] = plus(sum[i], arrives ? a : negate(a));
            if (a instanceof Double d && st.floatingSum(i)) {
              abs[i] = (abs[i] == null ? 0.0 : abs[i]) + Math.abs(d);
              bad[i] |= !arrives && !Double.isFinite(d);
            }
          }
          case MIN -> {
            if (arrives) {
              added[i] = added[i] == null || compare(a, added[i]) < 0 ? a : added[i];
            } else {
              removed[i] = removed[i] == null || compare(a, removed[i]) < 0 ? a : removed[i];
            }
          }
          case MAX -> {
            if (arrives) {
              added[i] = added[i] == null || compare(a, added[i]) > 0 ? a : added[i];
            } else {
              removed[i] = removed[i] == null || compare(a, removed[i]) > 0 ? a : removed[i];
            }
          }
          default -> { }
        }
      }
    }

    Row merged(StructType viewSchema) {
      boolean present = address != null;
      List<Object> out = new ArrayList<>(Arrays.asList(key));
      out.add(longOf(AggregateState.ROWS, viewSchema) + rows);
      boolean recompute = !present && (agg.having() != null || rows <= 0);
      for (int i = 0; i < argAt.length; i++) {
        Aggregation.Call c = st.call(i);
        if (c.arg() == null) {
          continue;
        }
        long oldN = longOf(AggregateState.count(i), viewSchema);
        long newN = oldN + n[i];
        out.add(newN);
        boolean live = present && newN > 0;
        if (c.keepsSum()) {
          DataType type = st.sumType(i);
          Object old = valueOf(AggregateState.sum(i), viewSchema);
          Object s = plus(old == null ? zero(type) : old, sum[i] == null ? zero(type) : sum[i]);
          if (type instanceof DecimalType d) {
            // Spark's sum of the change is NULL beyond decimal(38): so is the group's sum then
            boolean overflowed = sum[i] != null
                && fitted((BigDecimal) sum[i], DecimalType.apply(38, d.scale())) == null;
            s = overflowed ? null : fitted((BigDecimal) s, d);
            recompute |= live && (old == null && oldN > 0 || s == null);
          }
          out.add(newN == 0 ? zero(type) : s);
          if (st.floatingSum(i)) {
            recompute |= live && drift((Double) old, (Double) s, abs[i], bad[i]);
          }
        } else if (c.fn() != Aggregation.Function.COUNT) {
          boolean min = c.fn() == Aggregation.Function.MIN;
          Object old = valueOf(c.name(), viewSchema);
          // ties keep the view's value, as Spark's least / greatest do (only -0.0 and 0.0 tie
          // without being the same)
          Object x = old == null ? added[i] : added[i] == null ? old
              : min ? (compare(added[i], old) < 0 ? added[i] : old)
              : (compare(added[i], old) > 0 ? added[i] : old);
          out.add(x);
          if (removed[i] != null) {
            boolean held = old == null || (min ? compare(removed[i], old) <= 0
                : compare(removed[i], old) >= 0);
            boolean covered = old != null && added[i] != null
                && (min ? compare(added[i], old) <= 0 : compare(added[i], old) >= 0);
            recompute |= live && held && !covered;
          }
        }
      }
      out.add(recompute);
      out.add(address);
      return RowFactory.create(out.toArray());
    }

    private long longOf(String column, StructType viewSchema) {
      Object v = valueOf(column, viewSchema);
      return v == null ? 0L : (Long) v;
    }

    private Object valueOf(String column, StructType viewSchema) {
      return view == null ? null : view.get(viewSchema.fieldIndex(column));
    }
  }

  /**
   * Whether a floating sum must be rebuilt from its rows, as {@link AggregateState#merge}
   * decides: a departing NaN or infinity, an old sum that is one, or cancellation beyond
   * {@link AggregateState#DRIFT}; compared as Spark compares doubles (NaN above all).
   */
  private static boolean drift(Double old, Double s, Double abs, boolean bad) {
    if (bad) {
      return true;
    }
    if (old == null) {
      return false;
    }
    if (!Double.isFinite(old)) {
      return true;
    }
    return abs != null && less(Math.abs(s) * AggregateState.DRIFT, Math.abs(old) + abs);
  }

  /** Spark's {@code <} on doubles: NaN is above every number and equal to itself. */
  private static boolean less(double a, double b) {
    if (Double.isNaN(a)) {
      return false;
    }
    return Double.isNaN(b) || a < b;
  }

  /** Spark's order of two non-NULL values of one type. */
  static int compare(Object a, Object b) {
    if (a instanceof Double || a instanceof Float) {
      double x = ((Number) a).doubleValue();
      double y = ((Number) b).doubleValue();
      return x == y ? 0 : Double.compare(x, y);
    }
    if (a instanceof BigDecimal x) {
      return x.compareTo((BigDecimal) b);
    }
    if (a instanceof Number x) {
      return Long.compare(x.longValue(), ((Number) b).longValue());
    }
    if (a instanceof String x) {
      return UTF8String.fromString(x).compareTo(UTF8String.fromString((String) b));
    }
    @SuppressWarnings("unchecked")
    Comparable<Object> c = (Comparable<Object>) a;
    return c.compareTo(b);
  }

  private static Object zero(DataType type) {
    if (type instanceof DecimalType d) {
      return BigDecimal.ZERO.setScale(d.scale());
    }
    return type instanceof DoubleType ? (Object) 0.0d : (Object) 0L;
  }

  /** {@code a + b} in the sum's type; NULL is nothing added. Whole numbers wrap, as in Spark. */
  private static Object plus(Object a, Object b) {
    if (a == null) {
      return b;
    }
    if (b == null) {
      return a;
    }
    if (a instanceof BigDecimal x) {
      return x.add((BigDecimal) b);
    }
    if (a instanceof Double x) {
      return x + (Double) b;
    }
    return (Long) a + (Long) b;
  }

  private static Object negate(Object a) {
    if (a instanceof BigDecimal x) {
      return x.negate();
    }
    if (a instanceof Double x) {
      return -x;
    }
    return -(Long) a;
  }

  /** The decimal in its type's scale, or NULL when it has more digits than its precision. */
  private static BigDecimal fitted(BigDecimal v, DecimalType t) {
    if (v == null) {
      return null;
    }
    BigDecimal scaled = v.setScale(t.scale(), java.math.RoundingMode.HALF_UP);
    return scaled.unscaledValue().abs().compareTo(BigInteger.TEN.pow(t.precision())) < 0
        ? scaled : null;
  }
}
