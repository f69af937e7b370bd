package io.lancerest.spark.search;

import io.lancerest.spark.connector.search.SearchException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedArgumentExpression;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.StringType;

/**
 * The arguments of one call of a search function, by name: positional ones take the names of
 * the call's shape, named ones ({@code name => value}) their own. Every value must be a constant.
 */
final class SearchArguments {
  private final String function;
  private final Map<String, Expression> values;

  private SearchArguments(String function, Map<String, Expression> values) {
    this.function = function;
    this.values = values;
  }

  /**
   * Names {@code args}: the positional ones by {@code positional}, the named ones by their name
   * or an alias in {@code aliases} (alias to name), refusing names not in {@code known}.
   */
  static SearchArguments of(String function, List<Expression> args, List<String> positional,
      List<String> known, Map<String, String> aliases) {
    Map<String, Expression> out = new LinkedHashMap<>();
    int position = 0;
    boolean named = false;
    for (Expression e : args) {
      if (e instanceof NamedArgumentExpression arg) {
        named = true;
        String key = arg.key().toLowerCase(Locale.ROOT);
        String name = aliases.getOrDefault(key, key);
        if (!known.contains(name)) {
          throw new SearchException(function + ": unknown argument '" + arg.key()
              + "'; the arguments are " + String.join(", ", known) + ".");
        }
        put(function, out, name, arg.value());
      } else {
        if (named) {
          throw new SearchException(function + ": a positional argument follows a named one; "
              + "name every argument after the first named one.");
        }
        if (position >= positional.size()) {
          throw new SearchException(function + " takes at most " + positional.size()
              + " positional arguments (" + String.join(", ", positional) + "); pass the "
              + "others by name, e.g. nprobes => 20.");
        }
        put(function, out, positional.get(position++), e);
      }
    }
    return new SearchArguments(function, out);
  }

  private static void put(String function, Map<String, Expression> out, String name,
      Expression e) {
    if (out.put(name, e) != null) {
      throw new SearchException(function + ": argument '" + name + "' is given twice.");
    }
  }

  boolean has(String name) {
    return values.containsKey(name);
  }

  /** The constant value of {@code name}, or {@code null} when it is not given. */
  private Object value(String name) {
    Expression e = values.get(name);
    if (e == null) {
      return null;
    }
    if (!e.foldable()) {
      throw new SearchException(function + ": argument '" + name + "' must be a constant, "
          + "not " + e.sql() + ".");
    }
    return e.eval(null);
  }

  String string(String name) {
    Object v = value(name);
    if (v == null) {
      return null;
    }
    if (!(values.get(name).dataType() instanceof StringType)) {
      throw new SearchException(function + ": argument '" + name + "' must be a string, got "
          + values.get(name).sql() + ".");
    }
    return v.toString();
  }

  Integer integer(String name) {
    Object v = value(name);
    if (v == null) {
      return null;
    }
    if (!(v instanceof Integer || v instanceof Long || v instanceof Short
        || v instanceof Byte)) {
      throw new SearchException(function + ": argument '" + name + "' must be an integer, got "
          + values.get(name).sql() + ".");
    }
    long n = ((Number) v).longValue();
    if (n < Integer.MIN_VALUE || n > Integer.MAX_VALUE) {
      throw new SearchException(function + ": argument '" + name + "' is " + n + ", out of "
          + "range; pass a value of at most " + Integer.MAX_VALUE + ".");
    }
    return (int) n;
  }

  float[] floats(String name) {
    Object v = value(name);
    DataType type = values.get(name) == null ? null : values.get(name).dataType();
    if (v == null) {
      return null;
    }
    if (!(v instanceof ArrayData a) || !(type instanceof ArrayType at)) {
      throw new SearchException(function + ": argument '" + name + "' must be an array of "
          + "numbers, e.g. array(0.1, 0.2), got " + values.get(name).sql() + ".");
    }
    float[] out = new float[a.numElements()];
    for (int i = 0; i < out.length; i++) {
      Object x = a.isNullAt(i) ? null : a.get(i, at.elementType());
      if (x instanceof Decimal d) {
        out[i] = (float) d.toDouble();
      } else if (x instanceof Number n) {
        out[i] = n.floatValue();
      } else {
        throw new SearchException(function + ": argument '" + name + "' must be an array of "
            + "numbers; element " + (i + 1) + " is " + (x == null ? "NULL" : x) + ".");
      }
    }
    return out;
  }

  List<String> strings(String name) {
    Object v = value(name);
    if (v == null) {
      return null;
    }
    DataType type = values.get(name).dataType();
    if (v instanceof ArrayData a && type instanceof ArrayType at
        && at.elementType() instanceof StringType) {
      List<String> out = new ArrayList<>();
      for (int i = 0; i < a.numElements(); i++) {
        out.add(String.valueOf(a.getUTF8String(i)));
      }
      return out;
    }
    if (type instanceof StringType) {
      return List.of(v.toString());
    }
    throw new SearchException(function + ": argument '" + name + "' must be a column name or "
        + "an array of them, e.g. array('body'), got " + values.get(name).sql() + ".");
  }

  /** Whether {@code e} is a positional string argument (the call's shape depends on it). */
  static boolean isPositionalString(Expression e) {
    return !(e instanceof NamedArgumentExpression) && e.dataType() instanceof StringType;
  }
}
