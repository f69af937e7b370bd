package io.lancerest.spark.mv.definition;

import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The grouping of an aggregate query view ({@code SELECT keys, aggregates FROM t [WHERE …]
 * GROUP BY keys [HAVING …]}), as {@code source_query} format {@value SourceQuery#FORMAT_V2}
 * stores it.
 *
 * @param groupBy the grouping keys in GROUP BY order: the output column that holds each (a key
 *     not in the SELECT list is held in a hidden column named {@code __agg_key_<j>}) and its
 *     Spark SQL expression over source columns
 * @param aggregates the aggregate calls the view maintains, each with the output column that
 *     holds its value ({@code __agg_<i>} when only HAVING uses it)
 * @param having a boolean Spark SQL expression over the view's columns (hidden ones included),
 *     or {@code null}
 */
public record Aggregation(List<SourceQuery.OutputColumn> groupBy, List<Call> aggregates,
    String having) {
  /** Prefix of every column an aggregate view keeps for itself; hidden from {@code SELECT *}. */
  public static final String HIDDEN_PREFIX =
      io.lancerest.spark.catalog.ViewTableLayout.AGGREGATE_STATE_PREFIX;

  /** The aggregate functions that are maintained incrementally. */
  public enum Function {
    COUNT, SUM, AVG, MIN, MAX;

    public String wire() {
      return name().toLowerCase(Locale.ROOT);
    }

    static Function of(String wire, String column) {
      for (Function f : values()) {
        if (f.wire().equalsIgnoreCase(wire)) {
          return f;
        }
      }
      throw new InvalidViewDefinitionException("source_query aggregate '" + column
          + "' uses function '" + wire + "'; this engine maintains count, sum, avg, min and max");
    }
  }

  /**
   * One aggregate call.
   *
   * @param name the output column holding its value
   * @param function {@code count}, {@code sum}, {@code avg}, {@code min} or {@code max}
   * @param arg its argument, a Spark SQL expression over source columns; {@code null} for
   *     {@code count(*)}
   */
  public record Call(String name, String function, String arg) {
    public Call {
      if (name == null || name.isBlank()) {
        throw new InvalidViewDefinitionException("source_query aggregates need a name, got "
            + function + "(" + arg + ")");
      }
      Function f = Function.of(function, name);
      function = f.wire();
      if (arg != null && arg.isBlank()) {
        arg = null;
      }
      if (arg == null && f != Function.COUNT) {
        throw new InvalidViewDefinitionException("source_query aggregate '" + name + "' ("
            + function + ") needs an arg");
      }
    }

    public Function fn() {
      return Function.of(function, name);
    }

    /** Whether this is {@code count(*)}: every row of the group counts. */
    public boolean countsRows() {
      return arg == null;
    }

    /** Whether the view keeps a running sum for it. */
    public boolean keepsSum() {
      return fn() == Function.SUM || fn() == Function.AVG;
    }
  }

  public Aggregation {
    groupBy = groupBy == null ? List.of() : List.copyOf(groupBy);
    aggregates = aggregates == null ? List.of() : List.copyOf(aggregates);
    if (aggregates.isEmpty()) {
      throw new InvalidViewDefinitionException("source_query of an aggregate view needs at "
          + "least one entry in aggregates");
    }
    Set<String> names = new HashSet<>();
    for (SourceQuery.OutputColumn k : groupBy) {
      if (k == null || k.name() == null || k.expr() == null || k.expr().isBlank()) {
        throw new InvalidViewDefinitionException("source_query group_by entries need a name and "
            + "an expr, got " + k);
      }
      requireUnique(names, k.name());
    }
    for (Call c : aggregates) {
      requireUnique(names, c.name());
    }
    if (having != null && having.isBlank()) {
      having = null;
    }
  }

  private static void requireUnique(Set<String> names, String name) {
    if (!names.add(name.toLowerCase(Locale.ROOT))) {
      throw new InvalidViewDefinitionException("source_query names column '" + name
          + "' twice among group_by and aggregates");
    }
  }

  /** The hidden column of the j-th key when the SELECT list does not hold it. */
  public static String hiddenKey(int j) {
    return HIDDEN_PREFIX + "key_" + j;
  }

  /** The hidden column of the i-th aggregate when only HAVING uses it. */
  public static String hiddenValue(int i) {
    return HIDDEN_PREFIX + i;
  }

  /** Whether {@code column} is one an aggregate view keeps for itself. */
  public static boolean hidden(String column) {
    return column.toLowerCase(Locale.ROOT).startsWith(HIDDEN_PREFIX);
  }
}
