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
 * <p>Lance also orders floating-point values totally, where Spark does not: {@code -0.0} sorts
 * below {@code 0.0} (Spark finds them equal), and a NaN with its sign bit set (written by other
 * tools, e.g. a computed 0/0) sorts below every number (Spark puts every NaN above them). So a
 * float or double compared with zero, and any {@code <, <=, >, >=} with a float or double, stay
 * with Spark; {@code =} and {@code IN} with other finite values mean the same in both. Dates and
 * timestamps outside the years 1583-9999 are written wrongly too (Spark moves days of the 1582
 * calendar gap, {@code java.sql.Date} prints year 10000 as 0000), and {@code Long.MIN_VALUE}
 * reaches Lance as a double. Column names are written without quotes, so a name Lance's SQL
 * reads as a keyword or value ({@code null}, {@code true}, {@code not}, {@code current_date}:
 * measured wrong rows, a DELETE on {@code `null` IS NULL} deleted every row) keeps every filter
 * on it with Spark.
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
    }
    for (String column : f.references()) {
      if (!faithfulColumn(column)) {
        return false;
      }
    }
    if (f instanceof EqualTo e) {
      return faithfulValue(e.value());
    } else if (f instanceof EqualNullSafe e) {
      return faithfulValue(e.value());
    } else if (f instanceof GreaterThan g) {
      return faithfulOrder(g.value());
    } else if (f instanceof GreaterThanOrEqual g) {
      return faithfulOrder(g.value());
    } else if (f instanceof LessThan l) {
      return faithfulOrder(l.value());
    } else if (f instanceof LessThanOrEqual l) {
      return faithfulOrder(l.value());
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

  /** Values lance-spark writes as a Lance literal that equals the same rows as in Spark. */
  private static boolean faithfulValue(Object v) {
    if (v instanceof String s) {
      return s.indexOf('\'') < 0;
    } else if (v instanceof Double d) {
      return Double.isFinite(d) && d != 0.0; // -0.0 == 0.0 too: Lance tells them apart
    } else if (v instanceof Float x) {
      return Float.isFinite(x) && x != 0.0f;
    } else if (v instanceof Long l) {
      return l != Long.MIN_VALUE; // written as -9223372036854775808, which Lance reads as a double
    } else if (v instanceof java.sql.Timestamp ts) {
      // written as its wall-clock time in this JVM's default time zone, which Lance reads as
      // UTC: the same instant only where that zone is at UTC (measured: with the JVM in
      // America/Los_Angeles, `ts = TIMESTAMP'...'` matched no row)
      return TimeZone.getDefault().getOffset(ts.getTime()) == 0
          && plainYear(ts.toLocalDateTime().getYear());
    } else if (v instanceof java.sql.Date d) {
      return plainYear(d.toLocalDate().getYear());
    }
    return v instanceof Integer || v instanceof Short || v instanceof Byte
        || v instanceof Boolean || v instanceof BigDecimal;
  }

  /**
   * Values whose order lance-spark's literal gives Lance as Spark has it: not floating point,
   * where Lance's total order puts negative NaNs below every number.
   */
  private static boolean faithfulOrder(Object v) {
    return !(v instanceof Double) && !(v instanceof Float) && faithfulValue(v);
  }

  /**
   * Years written as they are: Spark moves the days of the 1582 calendar gap, and {@code
   * java.sql.Date} prints year 10000 as 0000.
   */
  private static boolean plainYear(int year) {
    return year >= 1583 && year <= 9999;
  }

  /**
   * Words Lance's SQL reads as a keyword or a value where lance-spark writes a column name
   * without backticks (measured: {@code null}, {@code not}, {@code current_date} gave wrong rows,
   * {@code true}, {@code select}, {@code interval} errors; {@code order}, {@code date}, {@code
   * timestamp}, {@code in}, {@code is}, {@code user} were read as columns). A few more words
   * that start an expression are on the list too: keeping a filter with Spark is always right.
   */
  private static final java.util.Set<String> KEYWORDS = java.util.Set.of("null", "true",
      "false", "unknown", "nan", "infinity", "not", "case", "cast", "try_cast", "exists",
      "select", "interval", "distinct", "all", "any", "some", "current_date", "current_time",
      "current_timestamp", "localtime", "localtimestamp");

  /**
   * A column reference (Spark's form: dotted parts, backticks around those that need them) that
   * Lance reads as the column: no part outside backticks is a keyword.
   */
  static boolean faithfulColumn(String reference) {
    int i = 0;
    int n = reference.length();
    while (i < n) {
      if (reference.charAt(i) == '`') {
        int close = i + 1;
        while (close < n) {
          if (reference.charAt(close) == '`') {
            if (close + 1 < n && reference.charAt(close + 1) == '`') {
              close += 2; // a doubled backtick inside the name
              continue;
            }
            break;
          }
          close++;
        }
        i = close + 1;
      } else {
        int dot = reference.indexOf('.', i);
        int end = dot < 0 ? n : dot;
        if (KEYWORDS.contains(reference.substring(i, end).toLowerCase(java.util.Locale.ROOT))) {
          return false;
        }
        i = end;
      }
      if (i < n && reference.charAt(i) == '.') {
        i++;
      }
    }
    return true;
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
