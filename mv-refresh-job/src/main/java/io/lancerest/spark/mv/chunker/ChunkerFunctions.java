package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.definition.FunctionClasses;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.function.BatchChunker;
import io.lancerest.spark.mv.function.Chunker;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Modifier;

/** Loads chunker classes named in a definition and checks that they can run. */
public final class ChunkerFunctions {
  private ChunkerFunctions() {}

  /**
   * Checks that {@code className} is a public class with a public no-argument constructor that
   * implements {@link Chunker} ({@code batch = false}) or {@link BatchChunker} ({@code batch =
   * true}).
   *
   * @throws InvalidViewDefinitionException otherwise, saying what is missing
   */
  public static Class<?> check(String className, boolean batch) {
    Class<?> cls;
    try {
      cls = FunctionClasses.load(className);
    } catch (ClassNotFoundException | LinkageError e) {
      throw new InvalidViewDefinitionException("Chunker class '" + className + "' cannot be "
          + "loaded (" + e + "); put its jar on the classpath of the driver and the executors "
          + "(spark.jars)", e);
    }
    Class<?> want = batch ? BatchChunker.class : Chunker.class;
    if (!want.isAssignableFrom(cls)) {
      Class<?> other = batch ? Chunker.class : BatchChunker.class;
      throw new InvalidViewDefinitionException("Chunker class '" + className + "' does not "
          + "implement " + want.getName() + (other.isAssignableFrom(cls)
          ? " (it implements " + other.getSimpleName() + ": set batch = " + !batch + ")"
          : ""));
    }
    if (!Modifier.isPublic(cls.getModifiers()) || Modifier.isAbstract(cls.getModifiers())) {
      throw new InvalidViewDefinitionException("Chunker class '" + className + "' must be a "
          + "public, non-abstract class");
    }
    try {
      Constructor<?> c = cls.getConstructor();
      if (!Modifier.isPublic(c.getModifiers())) {
        throw new NoSuchMethodException();
      }
    } catch (NoSuchMethodException e) {
      throw new InvalidViewDefinitionException("Chunker class '" + className + "' needs a "
          + "public no-argument constructor", e);
    }
    return cls;
  }

  /** A new instance (not yet opened). */
  static Object instantiate(String className, boolean batch, String view) {
    Class<?> cls = check(className, batch);
    try {
      return FunctionClasses.newInstance(cls);
    } catch (InvocationTargetException e) {
      throw new ChunkerRefreshException("Chunker class '" + className + "' of view '" + view
          + "' failed in its constructor: " + e.getCause(), e.getCause());
    } catch (FunctionClasses.InitializerFailedException e) {
      throw new ChunkerRefreshException("Chunker class '" + className + "' of view '" + view
          + "' " + e.getMessage(), e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new ChunkerRefreshException("Cannot create chunker '" + className + "' of view '"
          + view + "': " + e, e);
    }
  }
}
