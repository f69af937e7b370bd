package io.lancerest.spark.mv.definition;

/**
 * Loads the class a view's function entry names. The name comes from a definition anyone who may
 * write a view (or call the view service) chose, so the class is loaded without running its
 * static initializer: the caller checks that it implements the kind's interface, and only the
 * constructor call of a class that passed initializes it.
 */
public final class FunctionClasses {
  private FunctionClasses() {}

  /**
   * The class named {@code className}, not initialized, from the thread's context class loader
   * (the one {@code spark.jars} adds to), else this library's.
   *
   * @throws ClassNotFoundException when no such class is on the class path
   * @throws LinkageError when its bytes cannot be linked (built against other interfaces)
   */
  public static Class<?> load(String className) throws ClassNotFoundException {
    ClassLoader cl = Thread.currentThread().getContextClassLoader();
    return Class.forName(className, false, cl == null ? FunctionClasses.class.getClassLoader()
        : cl);
  }
}
