package io.lancerest.spark.computed;

import io.lancerest.spark.mv.function.ColumnFunction;
import java.lang.reflect.Constructor;
import java.lang.reflect.Modifier;

/** Loads and instantiates the class of a computed column's function. */
public final class ColumnFunctions {
  private ColumnFunctions() {}

  /**
   * A new, unopened instance of {@code className}.
   *
   * @param where "Computed column 'c' of table t", which the errors start with
   */
  public static ColumnFunction instantiate(String className, String where) {
    Class<?> c;
    try {
      ClassLoader l = Thread.currentThread().getContextClassLoader();
      c = Class.forName(className, true, l != null ? l : ColumnFunctions.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      throw new ComputedColumnException(where + ": function class '" + className
          + "' cannot be loaded (" + e + "). Put its jar on the driver's and executors' "
          + "classpath (--jars) or correct the class name.", e);
    }
    if (!ColumnFunction.class.isAssignableFrom(c)) {
      throw new ComputedColumnException(where + ": class '" + className + "' does not implement "
          + ColumnFunction.class.getName() + "; a computed column needs a 1:1 column function.");
    }
    Constructor<?> k;
    try {
      k = c.getConstructor();
    } catch (NoSuchMethodException e) {
      throw new ComputedColumnException(where + ": class '" + className + "' has no public "
          + "no-argument constructor; add one.", e);
    }
    if (Modifier.isAbstract(c.getModifiers()) || !Modifier.isPublic(c.getModifiers())) {
      throw new ComputedColumnException(where + ": class '" + className + "' must be a public "
          + "concrete class.");
    }
    try {
      return (ColumnFunction) k.newInstance();
    } catch (ReflectiveOperationException e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      throw new ComputedColumnException(where + ": class '" + className + "' could not be "
          + "created: " + cause, cause);
    }
  }
}
