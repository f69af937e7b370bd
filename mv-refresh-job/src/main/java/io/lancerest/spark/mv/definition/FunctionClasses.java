package io.lancerest.spark.mv.definition;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Loads the class a view's function entry names. The name comes from a definition anyone who may
 * write a view (or call the view service) chose, so the class is loaded without running its
 * static initializer: the caller checks that it implements the kind's interface, and only the
 * constructor call of a class that passed initializes it ({@link #newInstance}).
 */
public final class FunctionClasses {
  /**
   * How the JVM describes, at a later use, the failure of an initializer it ran earlier: {@code
   * Exception <the failure> [in thread "<name>"]} (JDK 17).
   */
  private static final Pattern EARLIER = Pattern.compile("^Exception (.+) \\[in thread .*\\]$",
      Pattern.DOTALL);

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

  /**
   * A new instance of {@code cls} by its public no-argument constructor, which initializes the
   * class on its first use.
   *
   * @throws InitializerFailedException when its static initializer failed, now or at an earlier
   *     use in this JVM (which then answers every use with a bare {@code NoClassDefFoundError})
   * @throws ReflectiveOperationException when there is no such constructor or it threw
   */
  public static <T> T newInstance(Class<T> cls) throws ReflectiveOperationException {
    try {
      return cls.getConstructor().newInstance();
    } catch (ExceptionInInitializerError e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      throw new InitializerFailedException(cause.toString(), cause);
    } catch (NoClassDefFoundError e) {
      if (!("Could not initialize class " + cls.getName()).equals(e.getMessage())) {
        throw e;
      }
      throw new InitializerFailedException(earlierFailure(e), e);
    }
  }

  /** What the first run of the initializer threw, as the JVM kept it, or that it is unknown. */
  private static String earlierFailure(NoClassDefFoundError e) {
    if (e.getCause() instanceof ExceptionInInitializerError earlier
        && earlier.getMessage() != null) {
      Matcher m = EARLIER.matcher(earlier.getMessage());
      if (m.matches()) {
        return m.group(1);
      }
    }
    return "an earlier use of the class in this JVM (its error is in that use's log)";
  }

  /**
   * A function class whose static initializer threw. The JVM never runs it again, so the class
   * stays unusable until the JVM restarts; the message says so, whichever use found it.
   */
  public static final class InitializerFailedException extends RuntimeException {
    InitializerFailedException(String failure, Throwable cause) {
      super("failed in its static initializer: " + failure + ". Fix the class (or the "
          + "environment it reads) and restart the JVM that loaded it (the Spark application, "
          + "or the view service): a JVM never runs a failed static initializer again", cause);
    }
  }
}
