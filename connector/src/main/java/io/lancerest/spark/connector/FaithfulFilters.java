package io.lancerest.spark.connector;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TimeZone;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualNullSafe;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.sources.Or;
import org.apache.spark.sql.sources.StringContains;
import org.apache.spark.sql.sources.StringEndsWith;
import org.apache.spark.sql.sources.StringStartsWith;

/**
 * The Spark filters lance-spark 0.4.0 can hand to Lance with their meaning intact; the others
 * stay with Spark, which evaluates them after the scan.
 *
 * <p>lance-spark compiles pushed filters into a SQL string for Lance ({@code
 * FilterPushDown.compileFiltersToSqlWhereClause}) and writes each value as {@code
 * 'text'}, {@code date 'text'}, {@code timestamp 'text'}, a decimal cast, or plain {@code
 * toString()}, escaping nothing. So a string holding a quote breaks out of its literal: {@code
 * name = 'O\'Brien'} reaches Lance as {@code name == 'O'Brien'} (a parse error), and {@code
 * x' OR 'a'='a} becomes a condition true for every row (wrong rows; a DELETE with it deletes the
 * whole table). Values written with {@code toString()} that Lance reads as something else fail
 * too: {@code NaN} and {@code Infinity} (read as column names), {@code java.time} dates and
 * instants (with {@code spark.sql.datetime.java8API.enabled}: {@code 2024-01-02} is arithmetic),
 * a {@code null} in an {@code IN} list (lance-spark fails while planning), and timestamps when the
 * JVM's default time zone is not at UTC. A backslash needs no escape: Lance's SQL does not treat
 * it specially (measured).
 *
 * <p>Declining such a filter costs only the push-down of that one filter; the result is Spark's.
 */
public final class FaithfulFilters {
  private FaithfulFilters() {}

  /**
   * Whether lance-spark compiles {@code f} (and every filter inside it) to a Lance filter that
   * means the same; {@code true} also for kinds lance-spark declines itself.
   */
  public static boolean faithful(Filter f) {
    if (f instanceof And a) {
      return faithful(a.left()) && faithful(a.right());
    } else if (f instanceof Or o) {
      return faithful(o.left()) && faithful(o.right());
    } else if (f instanceof Not n) {
      return faithful(n.child());
    } else if (f instanceof EqualTo e) {
      return faithfulValue(e.value());
    } else if (f instanceof EqualNullSafe e) {
      return faithfulValue(e.value());
    } else if (f instanceof GreaterThan g) {
      return faithfulValue(g.value());
    } else if (f instanceof GreaterThanOrEqual g) {
      return faithfulValue(g.value());
    } else if (f instanceof LessThan l) {
      return faithfulValue(l.value());
    } else if (f instanceof LessThanOrEqual l) {
      return faithfulValue(l.value());
    } else if (f instanceof In in) {
      return Arrays.stream(in.values()).allMatch(FaithfulFilters::faithfulValue);
    } else if (f instanceof StringStartsWith s) {
      return faithfulValue(s.value());
    } else if (f instanceof StringEndsWith s) {
      return faithfulValue(s.value());
    } else if (f instanceof StringContains s) {
      return faithfulValue(s.value());
    }
    return true; // no value (IS NULL, IS NOT NULL, ...)
  }

  /** Values lance-spark writes as a Lance literal of the same value. */
  private static boolean faithfulValue(Object v) {
    if (v instanceof String s) {
      return s.indexOf('\'') < 0;
    } else if (v instanceof Double d) {
      return Double.isFinite(d);
    } else if (v instanceof Float x) {
      return Float.isFinite(x);
    } else if (v instanceof java.sql.Timestamp ts) {
      // written as its wall-clock time in this JVM's default time zone, which Lance reads as
      // UTC: the same instant only where that zone is at UTC (measured: with the JVM in
      // America/Los_Angeles, `ts = TIMESTAMP'...'` matched no row)
      return TimeZone.getDefault().getOffset(ts.getTime()) == 0;
    }
    return v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte
        || v instanceof Boolean || v instanceof BigDecimal || v instanceof java.sql.Date;
  }

  /**
   * {@code scan.pushFilters} of the faithful ones among {@code filters}; returns the filters
   * Spark must evaluate after the scan: those {@code scan} declined and the unfaithful ones.
   */
  public static Filter[] push(SupportsPushDownFilters scan, Filter[] filters) {
    List<Filter> faithful = new ArrayList<>();
    List<Filter> post = new ArrayList<>();
    for (Filter f : filters) {
      (faithful(f) ? faithful : post).add(f);
    }
    if (post.isEmpty()) {
      return scan.pushFilters(filters);
    }
    post.addAll(0, Arrays.asList(scan.pushFilters(faithful.toArray(new Filter[0]))));
    return post.toArray(new Filter[0]);
  }
}
